"""Word images for tests: a text drawn with Pillow and cropped to its box plus a margin."""
from PIL import Image, ImageDraw, ImageFont


def draw_word(text, font=None, margin=(8, 8), fill="black", background="white"):
    """An RGB image of `text` in `font` (Pillow's own scalable font at 40 pixels when None: no
    font file needed), `margin` = (x, y) pixels of `background` on each side of its box."""
    font = font or ImageFont.load_default(size=40)
    left, top, right, bottom = font.getbbox(text)
    margin_x, margin_y = margin
    image = Image.new("RGB", (right - left + 2 * margin_x, bottom - top + 2 * margin_y),
                      background)
    ImageDraw.Draw(image).text((margin_x - left, margin_y - top), text, font=font, fill=fill)
    return image
