"""A small stdlib-only PNG rasteriser for bar and line charts, used when matplotlib is unavailable."""
import struct
import zlib

# 5x7 glyphs, one string of five bits per row; lower case is drawn as upper case.
_GLYPHS = {
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11100 10010 10001 10001 10001 10010 11100",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111", "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110", "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001", "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001", "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101", "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110", "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010", "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 10001 01010 00100 00100 00100", "Z": "11111 00001 00010 00100 01000 10000 11111",
    " ": "00000 00000 00000 00000 00000 00000 00000", ".": "00000 00000 00000 00000 00000 01100 01100",
    ",": "00000 00000 00000 00000 01100 00100 01000", "-": "00000 00000 00000 11111 00000 00000 00000",
    "_": "00000 00000 00000 00000 00000 00000 11111", "/": "00001 00010 00010 00100 01000 01000 10000",
    ":": "00000 01100 01100 00000 01100 01100 00000", "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000", "%": "11000 11001 00010 00100 01000 10011 00011",
    "=": "00000 00000 11111 00000 11111 00000 00000", "+": "00000 00100 00100 11111 00100 00100 00000",
    "?": "01110 10001 00001 00010 00100 00000 00100",
}
_GLYPHS = {k: [row for row in v.split()] for k, v in _GLYPHS.items()}

PALETTE = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189)]


class Canvas:
    def __init__(self, w, h, bg=(255, 255, 255)):
        self.w, self.h = w, h
        self.px = bytearray(bytes(bg) * (w * h))

    def set(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = (y * self.w + x) * 3
            self.px[i:i + 3] = bytes(c)

    def rect(self, x0, y0, x1, y1, c):
        x0, x1 = sorted((int(x0), int(x1)))
        y0, y1 = sorted((int(y0), int(y1)))
        for y in range(max(0, y0), min(self.h, y1 + 1)):
            for x in range(max(0, x0), min(self.w, x1 + 1)):
                i = (y * self.w + x) * 3
                self.px[i:i + 3] = bytes(c)

    def line(self, x0, y0, x1, y1, c, width=1):
        x0, y0, x1, y1 = int(x0), int(y0), int(x1), int(y1)
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        r = width // 2
        while True:
            self.rect(x0 - r, y0 - r, x0 + r, y0 + r, c)
            if x0 == x1 and y0 == y1:
                break
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, c=(0, 0, 0), scale=2, anchor="left"):
        width = len(s) * 6 * scale
        if anchor == "center":
            x -= width // 2
        elif anchor == "right":
            x -= width
        for ch in s:
            g = _GLYPHS.get(ch.upper(), _GLYPHS["?"])
            for row, bits in enumerate(g):
                for col, b in enumerate(bits):
                    if b == "1":
                        self.rect(x + col * scale, y + row * scale, x + col * scale + scale - 1,
                                  y + row * scale + scale - 1, c)
            x += 6 * scale

    def png(self):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _nice_max(v):
    if v <= 0:
        return 1.0
    p = 10 ** len(str(int(v))) / 10 if v >= 1 else 0.1
    while p * 10 < v:
        p *= 10
    for m in (1, 2, 2.5, 5, 10):
        if p * m >= v:
            return p * m
    return p * 10


def _label(v):
    if v >= 1000:
        return f"{v / 1000:g}K"
    return f"{v:g}"


def _frame(cv, spec, box, top):
    """Title, y gridlines and labels, axes, y label; returns y_of(value) for the plot box (L, R, T, B)."""
    L, R, T, B = box
    W, H = cv.w, cv.h
    cv.text(W // 2, 14, spec["title"], scale=2, anchor="center")
    ph = H - T - B

    def y_of(v):
        return T + ph - (min(v, top) / top) * ph

    for i in range(6):
        v = top * i / 5
        y = int(y_of(v))
        cv.line(L, y, W - R, y, (225, 225, 225))
        cv.text(L - 6, y - 7, _label(v), scale=2, anchor="right")
    cv.line(L, T, L, T + ph, (0, 0, 0))
    cv.line(L, T + ph, W - R, T + ph, (0, 0, 0))
    cv.text(6, T - 26, spec.get("ylabel", ""), scale=1)
    cv.text(W - R, H - 24, spec.get("xlabel", ""), scale=1, anchor="right")
    return y_of


def _legend(cv, names, left):
    lx = left + 10
    for si, name in enumerate(names):
        cv.rect(lx, cv.h - 24, lx + 14, cv.h - 10, PALETTE[si % 4])
        cv.text(lx + 20, cv.h - 24, name, scale=2)
        lx += 40 + 12 * len(name)


def _top(values):
    vals = [v for v in values if isinstance(v, (int, float))]
    return _nice_max(max(vals) if vals else 1.0)


def chart(spec):
    """Draws {'title', 'ylabel', 'categories', 'series': {name: [values]}, 'type': 'bars'|'lines'|'timeline'}
    as PNG bytes; a timeline's series are [[x, y], …] and its 'markers' [{'x', 'label', 'series'}]."""
    if spec.get("type") == "timeline":
        return timeline(spec)
    cats, series = spec["categories"], spec["series"]
    W, H = max(640, 90 * len(cats) + 160), 420
    L, R, T, B = 90, 20, 50, 70
    cv = Canvas(W, H)
    y_of = _frame(cv, spec, (L, R, T, B), _top(v for vs in series.values() for v in vs))
    ph = H - T - B
    slot = (W - L - R) / max(1, len(cats))
    names = list(series)
    for ci, cat in enumerate(cats):
        cx = L + slot * ci + slot / 2
        cv.text(int(cx), T + ph + 10, str(cat)[:14], scale=1, anchor="center")
    if spec.get("type") == "lines":
        for si, name in enumerate(names):
            pts = [(L + slot * ci + slot / 2, y_of(v)) for ci, v in enumerate(series[name])
                   if isinstance(v, (int, float))]
            for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
                cv.line(x0, y0, x1, y1, PALETTE[si % 4], width=3)
            for x, y in pts:
                cv.rect(x - 4, y - 4, x + 4, y + 4, PALETTE[si % 4])
    else:
        bw = slot * 0.8 / max(1, len(names))
        for si, name in enumerate(names):
            for ci, v in enumerate(series[name]):
                if not isinstance(v, (int, float)):
                    continue
                x0 = L + slot * ci + slot * 0.1 + bw * si
                cv.rect(x0, y_of(v), x0 + bw - 2, T + ph - 1, PALETTE[si % 4])
    _legend(cv, names, L)
    return cv.png()


def timeline(spec):
    """Lines over a linear x axis (seconds), with dashed vertical markers in their series' colour."""
    series = spec["series"]
    names = list(series)
    W, H = 900, 420
    L, R, T, B = 90, 20, 50, 70
    cv = Canvas(W, H)
    y_of = _frame(cv, spec, (L, R, T, B), _top(p[1] for pts in series.values() for p in pts))
    ph = H - T - B
    xmax = max([p[0] for pts in series.values() for p in pts] + [1])

    def x_of(x):
        return L + (x / xmax) * (W - L - R)

    step = max(1, int(_nice_max(xmax / 6)))
    for x in range(0, int(xmax) + 1, step):
        cv.text(int(x_of(x)), T + ph + 10, str(x), scale=1, anchor="center")
    for mi, m in enumerate(spec.get("markers", [])):
        color = PALETTE[names.index(m["series"]) % 4] if m.get("series") in names else (0, 0, 0)
        x = int(x_of(m["x"]))
        for y in range(T, T + ph, 8):
            cv.line(x, y, x, min(y + 4, T + ph), color)
        cv.text(x + 3, T + 4 + 10 * (mi % 6), m["label"], color, scale=1)
    for si, name in enumerate(names):
        pts = [(x_of(x), y_of(y)) for x, y in series[name] if isinstance(y, (int, float))]
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            cv.line(x0, y0, x1, y1, PALETTE[si % 4], width=2)
    _legend(cv, names, L)
    return cv.png()
