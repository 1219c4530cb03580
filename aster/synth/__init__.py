"""The synthetic word engine: word images rendered with the fonts on the machine, as TFRecords.

`aster-synth-words` (generator.py) plans each split (words, font families, style mix), renders
its images in worker processes and writes them with their transcripts and curve keypoints.

    generator.py      the aster-synth-words program: split plans, rendering workers, shards
    vocabulary.py     the words: dictionary words, random strings and digit strings
                      (templates.py: punctuated tokens, prices, e-mails... for --text ascii94)
    languages.py      alphabets besides English (Greek, Russian): letters, word lists, fonts
    fonts.py          finding usable fonts (font_checks.py: can a file draw the text;
                      font_families.py: a font's family, and splits by family;
                      font_categories.py: serif ... monospace, and their weights)
    google_fonts.py   `make fonts-google`: the Google Fonts library from @fontsource packages
                      (google_fonts.txt); fontsource.py reads it
    font_plans.py     the fonts of each split: reserved_fonts.py never trains, val_ood per
                      category, category-weighted sampling
    styles.py         every probability and strength of the renderer (train and ood presets)
    render.py         one word image and its keypoints (geometry.py: the warps;
                      backgrounds.py: the backgrounds)

Rendering is pure NumPy and Pillow (the workers import no TensorFlow); generator.py writes the
TFRecords with aster/tools/tfrecord_utils.py.
"""
