"""Geometry of a synthetic word: slant, arc / sine curves, rotation and perspective as point maps.

Each warp maps points of the flat text mask (pixel coordinates, x right, y down) forward to the
warped plane and back (`inverse`), on NumPy arrays of any shape. The renderer composes them,
maps the text's top and bottom lines forward (the keypoints written to `image/keypoints`) and
samples the output image by mapping every output pixel back to the flat mask, once, with
bilinear interpolation. So the keypoints follow the drawn text exactly, whatever the warps.
"""

import numpy as np


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


def box_outline(box, num=16):
    """Points along the border of box = (left, top, right, bottom): [4 * num] x and y arrays."""
    left, top, right, bottom = box
    t = np.linspace(0.0, 1.0, num)
    xs = np.concatenate([left + t * (right - left), np.full(num, right),
                         right - t * (right - left), np.full(num, left)])
    ys = np.concatenate([np.full(num, top), top + t * (bottom - top), np.full(num, bottom),
                         bottom - t * (bottom - top)])
    return xs, ys


def bounds(warps, box):
    """(left, top, right, bottom) of the warped border of box."""
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
