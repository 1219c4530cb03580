"""Street View Text (`test.xml` / `train.xml`): one crop per tagged rectangle.

Each <image> has <imageName>, <lex> (comma-separated words) and <taggedRectangles> of
<taggedRectangle x= y= width= height=><tag>WORD</tag>; every rectangle becomes its own record,
named `<imageName>#<k>` so no two crops share a filename.
"""

import os
import xml.etree.ElementTree as ET

from aster.tools import conversion


def parse_xml(xml_path):
    """Parses an XML file; raises ValueError naming the file on a syntax error."""
    try:
        return ET.parse(xml_path).getroot()
    except (ET.ParseError, OSError) as err:
        raise ValueError(f"cannot parse {xml_path!r}: {err}") from err


def _rectangle_box(rect):
    x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
    return (x, y, x + w, y + h)


def read_samples(xml_path, image_dir=None, use_lexicon=True):
    """Yields a Sample per tagged rectangle (Skip for ones with bad attributes or no tag)."""
    root = image_dir or os.path.dirname(os.path.abspath(xml_path))
    for image in parse_xml(xml_path).iter("image"):
        name = (image.findtext("imageName") or "").strip()
        lex = (image.findtext("lex") or "").split(",") if use_lexicon else []
        lexicon = tuple(w.strip() for w in lex if w.strip())
        for index, rect in enumerate(image.iter("taggedRectangle")):
            tag = (rect.findtext("tag") or "").strip()
            try:
                box = _rectangle_box(rect)
            except (TypeError, ValueError):
                yield conversion.Skip("rectangle without x/y/width/height", f"{name}#{index}")
                continue
            yield conversion.Sample(tag, image_path=os.path.join(root, name), box=box,
                                    filename=conversion.crop_name(name, index), lexicon=lexicon)


def convert(xml_path, output_path, image_dir=None, use_lexicon=True, **options):
    """Converts SVT word crops; options go to conversion.convert_samples."""
    samples = list(read_samples(xml_path, image_dir, use_lexicon))
    return conversion.convert_samples(samples, output_path, name="svt", total=len(samples),
                                      **options)


def add_arguments(parser):
    parser.add_argument("--xml_file", required=True, help="SVT test.xml or train.xml")
    parser.add_argument("--image_dir", help="image root (default: the xml file's folder)")
    parser.add_argument("--no_lexicon", action="store_true", help="do not store <lex> words")


def run(args, options):
    return convert(args.xml_file, args.output, image_dir=args.image_dir,
                   use_lexicon=not args.no_lexicon, **options)
