"""Geometry of a synthetic word: slant, arc / sine curves, rotation and perspective as point maps.

Each warp maps points of the flat text mask (pixel coordinates, x right, y down) forward to the
warped plane and back (`inverse`), on NumPy arrays of any shape. The renderer composes them,
maps the text's top and bottom lines forward (the keypoints written to `image/keypoints`) and
samples the output image from the flat mask once, through a mesh of cells whose corners are
mapped back through the warps (`mesh`, `transform_mesh`). So the keypoints follow the drawn text,
whatever the warps.
"""

import functools

import numpy as np
from PIL import Image


class Shear:
    """Slant: x moves by `slope` per pixel above the line y = y0 (positive leans right)."""

    def __init__(self, slope, y0):
        self.slope, self.y0 = slope, y0

    def forward(self, x, y):
        return x + self.slope * (self.y0 - y), y

    def inverse(self, x, y):
        return x - self.slope * (self.y0 - y), y


class Sine:
    """Columns shift vertically along amplitude * sin(2 pi x / period + phase)."""

    def __init__(self, amplitude, period, phase):
        self.amplitude, self.period, self.phase = amplitude, period, phase

    def _shift(self, x):
        return self.amplitude * np.sin(2 * np.pi * x / self.period + self.phase)

    def forward(self, x, y):
        return x, y + self._shift(x)

    def inverse(self, x, y):
        return x, y - self._shift(x)


class Arc:
    """Bends the line y = yc around a circle of `radius` centred below (up=True: an arch) or
    above (a bowl) the point (cx, yc); x becomes arc length, so letters keep their widths."""

    def __init__(self, cx, yc, radius, up=True):
        self.cx, self.yc, self.radius, self.sign = cx, yc, radius, 1.0 if up else -1.0

    def forward(self, x, y):
        theta = (x - self.cx) / self.radius
        rho = self.radius + self.sign * (self.yc - y)
        centre_y = self.yc + self.sign * self.radius
        return self.cx + rho * np.sin(theta), centre_y - self.sign * rho * np.cos(theta)

    def inverse(self, x, y):
        centre_y = self.yc + self.sign * self.radius
        dx, dy = x - self.cx, self.sign * (centre_y - y)
        rho, theta = np.hypot(dx, dy), np.arctan2(dx, dy)
        return self.cx + self.radius * theta, self.yc - self.sign * (rho - self.radius)


class Rotation:
    """Rotation by `degrees` (counter-clockwise as seen) about (cx, cy)."""

    def __init__(self, degrees, cx, cy):
        angle = np.deg2rad(degrees)
        self.cos, self.sin, self.cx, self.cy = np.cos(angle), np.sin(angle), cx, cy

    def _rotate(self, x, y, sin):
        dx, dy = x - self.cx, y - self.cy
        return self.cx + self.cos * dx + sin * dy, self.cy - sin * dx + self.cos * dy

    def forward(self, x, y):
        return self._rotate(x, y, self.sin)

    def inverse(self, x, y):
        return self._rotate(x, y, -self.sin)


class Perspective:
    """The homography taking the 4 `source` corners to the 4 `target` corners."""

    def __init__(self, source, target):
        self.matrix = homography(source, target)
        self.inverse_matrix = np.linalg.inv(self.matrix)

    @staticmethod
    def _apply(matrix, x, y):
        w = matrix[2, 0] * x + matrix[2, 1] * y + matrix[2, 2]
        return ((matrix[0, 0] * x + matrix[0, 1] * y + matrix[0, 2]) / w,
                (matrix[1, 0] * x + matrix[1, 1] * y + matrix[1, 2]) / w)

    def forward(self, x, y):
        return self._apply(self.matrix, x, y)

    def inverse(self, x, y):
        return self._apply(self.inverse_matrix, x, y)


def homography(source, target):
    """3x3 matrix H with H @ (x, y, 1) ~ target for each of the 4 source points."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(source, target, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs.extend([u, v])
    h = np.linalg.solve(np.array(rows, float), np.array(rhs, float))
    return np.append(h, 1.0).reshape(3, 3)


def forward(warps, x, y):
    for warp in warps:
        x, y = warp.forward(x, y)
    return x, y


def inverse(warps, x, y):
    for warp in reversed(warps):
        x, y = warp.inverse(x, y)
    return x, y


@functools.cache
def _ramp(num):
    """0, 1, ..., num - 1 as float64 (read-only: it is shared)."""
    ramp = np.arange(num, dtype=np.float64)
    ramp.flags.writeable = False
    return ramp


def linspace(start, stop, num):
    """np.linspace(start, stop, num) for scalar start and stop and num >= 2, value for value
    (the same ramp * step + start, the end set to stop), without its per-call overhead."""
    points = _ramp(num) * (float(stop - start) / (num - 1)) + start
    points[-1] = stop
    return points


@functools.cache
def _unit_steps(num):
    steps = np.linspace(0.0, 1.0, num)
    steps.flags.writeable = False
    return steps


def box_outline(box, num=16):
    """Points along the border of box = (left, top, right, bottom): [4 * num] x and y arrays."""
    left, top, right, bottom = box
    t = _unit_steps(num)
    xs = np.concatenate([left + t * (right - left), np.full(num, right),
                         right - t * (right - left), np.full(num, left)])
    ys = np.concatenate([np.full(num, top), top + t * (bottom - top), np.full(num, bottom),
                         bottom - t * (bottom - top)])
    return xs, ys


def bounds(warps, box):
    """(left, top, right, bottom) of the warped border of box: the box itself (as floats) when
    there is no warp, since its border's extremes are then its sides."""
    if not warps:
        return tuple(float(v) for v in box)
    xs, ys = forward(warps, *box_outline(box))
    return xs.min(), ys.min(), xs.max(), ys.max()


def bilinear(channels, x, y):
    """Samples [H, W, C] float32 at float pixel coordinates (centres at i + 0.5); 0 outside."""
    height, width = channels.shape[:2]
    x, y = x - 0.5, y - 0.5
    x0, y0 = np.floor(x).astype(np.int64), np.floor(y).astype(np.int64)
    fx, fy = (x - x0)[..., None].astype(np.float32), (y - y0)[..., None].astype(np.float32)
    padded = np.pad(channels, ((1, 1), (1, 1), (0, 0)))
    x0 = np.clip(x0 + 1, 0, width + 1)
    y0 = np.clip(y0 + 1, 0, height + 1)
    x1, y1 = np.clip(x0 + 1, 0, width + 1), np.clip(y0 + 1, 0, height + 1)
    top = padded[y0, x0] * (1 - fx) + padded[y0, x1] * fx
    bottom = padded[y1, x0] * (1 - fx) + padded[y1, x1] * fx
    return top * (1 - fy) + bottom * fy


@functools.lru_cache(maxsize=64)
def _mesh_cells(size, curved):
    """(x and y cell edges in output pixels, the cells' boxes) of the mesh for an output size."""
    width, height = size
    cols, rows = (16, 2) if curved else (4, 1)
    xs = np.linspace(0, width, cols + 1)
    ys = np.linspace(0, height, rows + 1)
    boxes = tuple((int(xs[c]), int(ys[r]), int(xs[c + 1]), int(ys[r + 1]))
                  for r in range(rows) for c in range(cols))
    return xs, ys, boxes


def mesh(warps, crop, size, curved):
    """The cells of the output image and the quads of the flat mask they come from (each cell's
    corners mapped back through the warps), as (boxes, coefficients): PIL's QUAD coefficients per
    cell (see `transform_mesh`). Curves get 16 cells along the word (an arc of up to 2.4 rad is
    then within ~0.3 px of its chords; 2 rows), the others 4 (homographies are close to bilinear
    over a word). `crop` = (left, top, right, bottom) in the warped plane; `size` = (w, h)."""
    width, height = size
    xs, ys, boxes = _mesh_cells(size, curved)
    gx = np.empty((len(ys), len(xs)))
    gy = np.empty((len(ys), len(xs)))
    gx[:] = crop[0] + xs * (crop[2] - crop[0]) / width
    gy[:] = (crop[1] + ys * (crop[3] - crop[1]) / height)[:, None]
    fx, fy = inverse(warps, gx, gy)
    rows, cols = len(ys) - 1, len(xs) - 1

    def corner(down, right):  # that corner of every cell, cells row by row
        return (fx[down:down + rows, right:right + cols].ravel(),
                fy[down:down + rows, right:right + cols].ravel())

    corners = [corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1)]  # NW, SW, SE, NE
    return boxes, _quad_coefficients(boxes, corners)


def _quad_coefficients(boxes, corners):
    """[cells, 8] coefficients of PIL's QUAD transform, with the float operations of
    Image.transform's QUAD case in the same order (so the same bits), for all cells at once."""
    (x0, y0), (sw_x, sw_y), (se_x, se_y), (ne_x, ne_y) = corners
    sizes = np.array([(b[2] - b[0], b[3] - b[1]) for b in boxes])
    a_s, a_t = 1.0 / sizes[:, 0], 1.0 / sizes[:, 1]
    return np.stack([x0, (ne_x - x0) * a_s, (sw_x - x0) * a_t,
                     (se_x - sw_x - ne_x + x0) * a_s * a_t,
                     y0, (ne_y - y0) * a_s, (sw_y - y0) * a_t,
                     (se_y - sw_y - ne_y + y0) * a_s * a_t], axis=1).tolist()


def transform_mesh(image, size, cells):
    """`image` ('L') sampled bilinearly through the mesh `cells` = (boxes, coefficients) into a
    new image of `size`: what image.transform(size, Image.MESH, ...) gives for the same quads,
    without its per-cell Python work (one core QUAD transform per cell)."""
    image.load()
    out = Image.new(image.mode, size)
    for box, coefficients in zip(*cells, strict=True):
        out.im.transform(box, image.im, Image.Transform.QUAD, coefficients, Image.BILINEAR, 1)
    return out
