"""ICDAR 2003 word crops (`words.xml`: `<image file="word/1/1.jpg" tag="Tiredness" />`).

Lexicons: `full` is every distinct ground-truth word of the (filtered) set; `50` reads per-image
50-word lexicons from `lexicon50_file` (lines `word/1/1.jpg<TAB>w1,w2,...`, e.g. the lists of
Wang et al.), and when no file is given builds one per image from its own word plus 49 distractors
drawn from the full lexicon with a seed fixed by the file name (reproducible, but not the published
lists: say so when reporting such numbers). `standard_subset` keeps the usual 860-image protocol:
words of at least 3 characters, letters and digits only.
"""

import os
import random
import zlib

from aster.tools import conversion
from aster.tools.converters import svt

LEXICONS = ("none", "full", "50")


def _field(element, attribute, child):
    """An attribute, or else a child element's text (both IC03 xml styles exist)."""
    value = element.get(attribute)
    return (value if value is not None else element.findtext(child) or "").strip()


def read_entries(xml_path, standard_subset=False):
    """Returns [(file, word)] of words.xml, optionally restricted to the standard subset."""
    entries = []
    for image in svt.parse_xml(xml_path).iter("image"):
        name, word = _field(image, "file", "imageName"), _field(image, "tag", "tag")
        if standard_subset and (len(word) < 3 or not word.isalnum() or not word.isascii()):
            continue
        entries.append((name, word))
    return entries


def read_lexicon50_file(path):
    """`file<TAB>w1,w2,...` lines -> {file: (words...)}; raises ValueError on a line without tab."""
    lexicons = {}
    for number, line in conversion.read_text_lines(path):
        name, tab, words = line.partition("\t")
        if not tab:
            raise ValueError(f"{path}:{number}: expected file<TAB>comma-separated words")
        lexicons[name.strip()] = tuple(w.strip() for w in words.split(",") if w.strip())
    return lexicons


def generated_lexicon50(name, word, full_lexicon):
    """The word plus 49 distractors from full_lexicon, seeded by the file name (sorted)."""
    others = sorted(w for w in full_lexicon if w.lower() != word.lower())
    rng = random.Random(zlib.crc32(name.encode("utf-8")))
    return tuple(sorted([word] + rng.sample(others, min(49, len(others)))))


def read_samples(xml_path, image_dir=None, lexicon="full", standard_subset=False,
                 lexicon50_file=None):
    """Yields a Sample per word crop of words.xml."""
    if lexicon not in LEXICONS:
        raise ValueError(f"lexicon {lexicon!r}; expected one of {list(LEXICONS)}")
    root = image_dir or os.path.dirname(os.path.abspath(xml_path))
    entries = read_entries(xml_path, standard_subset)
    full = tuple(sorted({word for _, word in entries if word}))
    given = read_lexicon50_file(lexicon50_file) if lexicon50_file else None
    for name, word in entries:
        if lexicon == "full":
            words = full
        elif lexicon == "50":
            words = given.get(name, ()) if given is not None else \
                generated_lexicon50(name, word, full)
        else:
            words = ()
        yield conversion.Sample(word, image_path=os.path.join(root, name), filename=name,
                                lexicon=words)


def convert(xml_path, output_path, image_dir=None, lexicon="full", standard_subset=False,
            lexicon50_file=None, **options):
    """Converts IC03 word crops; options go to conversion.convert_samples."""
    samples = list(read_samples(xml_path, image_dir, lexicon, standard_subset, lexicon50_file))
    return conversion.convert_samples(samples, output_path, name="ic03", total=len(samples),
                                      **options)


def add_arguments(parser):
    parser.add_argument("--xml_file", required=True, help="IC03 word/words.xml")
    parser.add_argument("--image_dir", help="image root (default: the xml file's folder)")
    parser.add_argument("--lexicon", choices=LEXICONS, default="full")
    parser.add_argument("--lexicon50_file", help="per-image 50-word lexicons (file<TAB>w1,w2..)")
    parser.add_argument("--standard_subset", action="store_true",
                        help="keep only alphanumeric words of >= 3 characters (860 images)")


def run(args, options):
    return convert(args.xml_file, args.output, image_dir=args.image_dir, lexicon=args.lexicon,
                   standard_subset=args.standard_subset, lexicon50_file=args.lexicon50_file,
                   **options)
