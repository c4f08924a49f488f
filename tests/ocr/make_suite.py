#!/usr/bin/python3
"""The OCR test suite: short videos of rendered text with their ground truth.

    make_suite.py OUTDIR [--smoke | --random SEED]

Writes OUTDIR/NAME.{mkv,avi,mp4,webm} and OUTDIR/NAME.json:
    {"file": "NAME.mp4", "width": W, "height": H, "frames": 8, "fps": 8,
     "lines": ["line 1", ...], "font": ..., "px": ..., "codec": ..., ...}
"lines" are the text rows top to bottom; blocks side by side on one row
(two columns) are one line, left to right, joined by a space. A video
without text has no lines. The text is static (two videos scroll it a few
pixels a frame); rows never overlap and keep a margin to the frame's edges.

Seeded: the same script gives the same decoded frames (PIL renders,
GStreamer encodes on one thread; only the containers' dates and IDs differ). Needs python3-pil, python3-numpy, fonts-dejavu-core,
fonts-liberation, fonts-freefont-ttf, gstreamer1.0-plugins-good (VP8, WebM,
Matroska, AVI) and gstreamer1.0-plugins-ugly (x264). Text uses printable
ASCII only, all of it in PP-OCR's dictionary (ppocr_keys_v1.txt) or a space.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FRAMES, FPS = 8, 8
FONT_DIRS = ['/usr/share/fonts/truetype/' + d for d in ('dejavu', 'liberation', 'freefont')]
# family -> file per style. DejaVu's italics are in fonts-dejavu-extra, not core.
FONTS = {
    'DejaVuSans': {'regular': 'DejaVuSans', 'bold': 'DejaVuSans-Bold'},
    'DejaVuSerif': {'regular': 'DejaVuSerif', 'bold': 'DejaVuSerif-Bold'},
    'DejaVuSansMono': {'regular': 'DejaVuSansMono', 'bold': 'DejaVuSansMono-Bold'},
    'LiberationSans': {s: 'LiberationSans-' + f for s, f in
                       (('regular', 'Regular'), ('bold', 'Bold'), ('italic', 'Italic'))},
    'LiberationSerif': {s: 'LiberationSerif-' + f for s, f in
                        (('regular', 'Regular'), ('bold', 'Bold'), ('italic', 'Italic'))},
    'LiberationMono': {s: 'LiberationMono-' + f for s, f in
                       (('regular', 'Regular'), ('bold', 'Bold'), ('italic', 'Italic'))},
    'FreeSans': {'regular': 'FreeSans', 'bold': 'FreeSansBold', 'italic': 'FreeSansOblique'},
    'FreeSerif': {'regular': 'FreeSerif', 'bold': 'FreeSerifBold', 'italic': 'FreeSerifItalic'},
    'FreeMono': {'regular': 'FreeMono', 'bold': 'FreeMonoBold', 'italic': 'FreeMonoOblique'},
}

# encoder and muxer per codec (all single-threaded: deterministic output)
CODECS = {
    'raw-mkv': ('mkv', ['video/x-raw,format=I420', '!', 'matroskamux']),
    'raw-avi': ('avi', ['video/x-raw,format=BGR', '!', 'avimux']),
    'h264': ('mp4', ['video/x-raw,format=I420', '!', 'x264enc', 'threads=1', 'pass=qual',
                     'quantizer=23', 'speed-preset=medium', '!', 'mp4mux']),
    'vp8': ('webm', ['video/x-raw,format=I420', '!', 'vp8enc', 'threads=1', 'end-usage=cq',
                     'cq-level=12', 'target-bitrate=20000000', 'deadline=0', '!', 'webmmux']),
}

# name, size, codec, font, style, px (font size), look, layout, rows, scroll (dx, dy per frame)
SUITE = [
    ('sans-center-720p', (1280, 720), 'h264', 'DejaVuSans', 'regular', 40, 'dark-on-light', 'center', 2, None),
    ('sans-small-vga', (640, 480), 'vp8', 'DejaVuSans', 'regular', 16, 'dark-on-light', 'left', 4, None),
    ('sans-bold-qvga', (320, 240), 'raw-mkv', 'DejaVuSans', 'bold', 20, 'light-on-dark', 'center', 2, None),
    ('serif-1080p-small', (1920, 1080), 'h264', 'DejaVuSerif', 'regular', 24, 'dark-on-light', 'scattered', 4, None),
    ('serif-bold-colour', (800, 600), 'vp8', 'DejaVuSerif', 'bold', 32, 'colour', 'left', 3, None),
    ('mono-ids', (1000, 700), 'raw-avi', 'DejaVuSansMono', 'regular', 22, 'light-on-dark', 'left', 4, None),
    ('mono-bold-gradient', (854, 480), 'h264', 'DejaVuSansMono', 'bold', 28, 'gradient', 'center', 2, None),
    ('lib-sans-columns', (1280, 720), 'vp8', 'LiberationSans', 'regular', 26, 'dark-on-light', 'columns', 3, None),
    ('lib-sans-italic-noise', (960, 540), 'h264', 'LiberationSans', 'italic', 34, 'noise', 'center', 2, None),
    ('lib-sans-bold-1080p', (1920, 1080), 'vp8', 'LiberationSans', 'bold', 48, 'colour', 'scattered', 3, None),
    ('lib-serif-texture', (720, 576), 'raw-mkv', 'LiberationSerif', 'regular', 30, 'texture', 'left', 3, None),
    ('lib-serif-italic', (1024, 768), 'h264', 'LiberationSerif', 'italic', 26, 'dark-on-light', 'scattered', 3, None),
    ('lib-serif-bold-dark', (640, 360), 'vp8', 'LiberationSerif', 'bold', 22, 'light-on-dark', 'center', 3, None),
    ('lib-mono-prices', (1366, 768), 'h264', 'LiberationMono', 'regular', 18, 'gradient', 'columns', 4, None),
    ('lib-mono-bold-qvga', (320, 240), 'raw-avi', 'LiberationMono', 'bold', 14, 'dark-on-light', 'left', 4, None),
    ('lib-mono-italic', (800, 450), 'vp8', 'LiberationMono', 'italic', 24, 'colour', 'center', 2, None),
    ('free-sans-scroll', (640, 480), 'h264', 'FreeSans', 'regular', 30, 'dark-on-light', 'center', 2, (0, -3)),
    ('free-sans-bold-noise', (1280, 720), 'raw-mkv', 'FreeSans', 'bold', 36, 'noise', 'scattered', 3, None),
    ('free-sans-italic-tiny', (1920, 1080), 'h264', 'FreeSans', 'italic', 14, 'dark-on-light', 'left', 4, None),
    ('free-serif-colour', (500, 380), 'vp8', 'FreeSerif', 'regular', 20, 'colour', 'left', 3, None),
    ('free-serif-bold-columns', (1600, 900), 'h264', 'FreeSerif', 'bold', 32, 'light-on-dark', 'columns', 2, None),
    ('free-serif-italic-texture', (1000, 700), 'vp8', 'FreeSerif', 'italic', 40, 'texture', 'center', 2, None),
    ('free-mono-gradient', (640, 480), 'raw-avi', 'FreeMono', 'regular', 24, 'gradient', 'left', 3, None),
    ('free-mono-bold-big', (1280, 720), 'h264', 'FreeMono', 'bold', 48, 'dark-on-light', 'center', 1, None),
    ('sans-big-colour', (480, 360), 'vp8', 'DejaVuSans', 'regular', 44, 'colour', 'center', 1, None),
    ('serif-ticker-scroll', (1280, 720), 'vp8', 'DejaVuSerif', 'regular', 28, 'light-on-dark', 'left', 1, (-6, 0)),
    ('lib-sans-dense', (1920, 1080), 'raw-mkv', 'LiberationSans', 'regular', 20, 'texture', 'columns', 4, None),
    ('mono-bold-noise-small', (400, 300), 'h264', 'DejaVuSansMono', 'bold', 18, 'noise', 'scattered', 2, None),
    ('free-sans-light-gradient', (1024, 576), 'h264', 'FreeSans', 'regular', 26, 'gradient-dark', 'center', 3, None),
    ('lib-serif-odd-size', (1000, 562), 'vp8', 'LiberationSerif', 'regular', 18, 'dark-on-light', 'left', 4, None),
    ('sans-vertical', (640, 480), 'h264', 'DejaVuSans', 'regular', 30, 'dark-on-light', 'vertical', 1, None),
    ('lib-serif-vertical-colour', (1280, 720), 'vp8', 'LiberationSerif', 'bold', 36, 'colour', 'vertical', 1, None),
]
NO_TEXT = [  # name, size, codec, background
    ('blank-white', (640, 480), 'h264', 'white'),
    ('blank-smpte', (1280, 720), 'vp8', 'smpte'),
    ('blank-noise', (800, 600), 'raw-mkv', 'noise'),
    ('blank-gradient', (1920, 1080), 'h264', 'gradient'),
]
SMOKE = [
    ('smoke-sans', (320, 240), 'vp8', 'DejaVuSans', 'regular', 24, 'dark-on-light', 'center', 1, None),
    ('smoke-mono-dark', (480, 360), 'h264', 'LiberationMono', 'bold', 22, 'light-on-dark', 'left', 2, None),
    ('smoke-serif-colour', (640, 360), 'raw-mkv', 'DejaVuSerif', 'regular', 28, 'colour', 'center', 2, None),
    ('smoke-italic-gradient', (400, 300), 'h264', 'FreeSans', 'italic', 26, 'gradient', 'left', 2, None),
    ('smoke-vertical', (480, 360), 'raw-mkv', 'LiberationSans', 'regular', 24, 'dark-on-light', 'vertical', 1, None),
]
SMOKE_NO_TEXT = [('smoke-blank-smpte', (320, 240), 'vp8', 'smpte')]

# --- text: realistic strings from small vocabularies ---------------------
WORDS = ('the quick brown fox jumps over lazy dog video frame stream camera signal '
         'north station market coffee ticket window garden river bridge office '
         'delivery morning evening weather report please keep door closed open '
         'daily news update traffic exit left right only staff parking').split()
STREETS = ('Baker Street', 'Main St.', 'Elm Avenue', 'Rue de Rivoli', 'Harbour Rd.',
           'King Street West', 'Park Lane', 'Station Road')
CITIES = ('London', 'Paris', 'Berlin', 'Toronto', 'Oslo', 'Madrid', 'Boston', 'Lyon')


def sentence(rng):
    words = rng.sample(WORDS, rng.randint(2, 7))
    text = ' '.join(words)
    text = text[0].upper() + text[1:] if rng.random() < 0.6 else text.upper()
    return text + rng.choice(['', '.', '.', ':', ','])


def address(rng):
    return rng.choice([
        f'{rng.randint(1, 999)} {rng.choice(STREETS)}',
        f'{rng.randint(1, 250)} {rng.choice(STREETS)}, {rng.choice(CITIES)}',
        f'{rng.choice(CITIES)} {rng.randint(10000, 99999)}',
        f'Unit {rng.randint(1, 40)}/{rng.randint(1, 200)} {rng.choice(STREETS)}',
    ])


def identifier(rng):
    # no I, O, Q: real IDs leave them out (they read as 1, 0)
    letters = lambda n: ''.join(rng.choice('ABCDEFGHJKLMNPRSTUVWXYZ') for _ in range(n))
    digits = lambda n: ''.join(rng.choice('0123456789') for _ in range(n))
    return rng.choice([
        f'ID: {letters(2)}-{digits(4)}-{letters(2)}',
        f'Order #{digits(5)}-{digits(2)}',
        f'SN {digits(2)}{letters(2)}-{digits(4)}-{letters(1)}{digits(3)}',
        f'Invoice {rng.randint(2019, 2026)}/{digits(4)}',
        f'Tel. ({digits(3)}) {digits(3)}-{digits(4)}',
        f'{rng.randint(2019, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} '
        f'{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}',
        f'Gate {letters(1)}{rng.randint(1, 40)} - Flight {letters(2)} {digits(4)}',
    ])


def price(rng):
    amount = f'{rng.randint(1, 2999)}.{rng.randint(0, 99):02d}'
    return rng.choice([
        f'Total: ${amount}',
        f'EUR {amount} (incl. VAT)',
        f'Price: {amount} / kg',
        f'{rng.choice(WORDS).capitalize()} {amount}',
        f'Save {rng.randint(5, 70)}% - now {amount}',
    ])


KINDS = (sentence, address, identifier, price)


def text_line(rng, font, max_width):
    """A 5-45 character string of a random kind that fits max_width pixels;
    words dropped from the end when none of a few tries fits."""
    for _ in range(20):
        text = rng.choice(KINDS)(rng)
        if 5 <= len(text) <= 45 and font.getlength(text) <= max_width:
            return text
    while ' ' in text and (len(text) > 45 or font.getlength(text) > max_width):
        text = text.rsplit(' ', 1)[0]
    if font.getlength(text) > max_width:  # one long word: characters off the end
        while len(text) > 5 and font.getlength(text) > max_width:
            text = text[:-1]
    return text


# --- backgrounds and colours ---------------------------------------------
def gradient(w, h, c0, c1, vertical):
    t = np.linspace(0, 1, h if vertical else w, dtype=np.float32)
    t = t[:, None, None] if vertical else t[None, :, None]
    return np.broadcast_to(np.array(c0) * (1 - t) + np.array(c1) * t, (h, w, 3))


def blobs(rng, w, h, cells):
    """Low-frequency texture in 0..1: a coarse random grid scaled up smoothly."""
    grid = np.array([[rng.random() * 255 for _ in range(cells)] for _ in range(cells)], np.float32)
    image = Image.fromarray(grid.astype(np.uint8)).resize((w, h), Image.BICUBIC)
    return np.asarray(image, np.float32)[:, :, None] / 255


def look(rng, name, w, h):
    """(background as HxWx3 float array, text colour)."""
    if name == 'dark-on-light':
        bg = rng.choice([(255, 255, 255), (235, 235, 228), (250, 246, 235)])
        return np.broadcast_to(np.array(bg, np.float32), (h, w, 3)), rng.choice([(0, 0, 0), (40, 40, 40), (20, 30, 80)])
    if name == 'light-on-dark':
        bg = rng.choice([(0, 0, 0), (25, 25, 30), (10, 40, 25)])
        return np.broadcast_to(np.array(bg, np.float32), (h, w, 3)), rng.choice([(255, 255, 255), (230, 230, 200), (255, 220, 0)])
    if name == 'colour':
        fg, bg = rng.choice([((255, 230, 0), (20, 40, 150)), ((255, 255, 255), (180, 20, 30)),
                             ((20, 20, 110), (255, 240, 160)), ((0, 90, 30), (255, 215, 225)),
                             ((200, 0, 0), (245, 245, 245)), ((255, 255, 255), (0, 120, 110))])
        return np.broadcast_to(np.array(bg, np.float32), (h, w, 3)), fg
    if name == 'gradient':
        return gradient(w, h, (255, 255, 255), rng.choice([(150, 190, 230), (230, 200, 140)]),
                        rng.random() < 0.5), (0, 0, 0)
    if name == 'gradient-dark':
        return gradient(w, h, (0, 0, 60), (90, 20, 70), rng.random() < 0.5), (255, 255, 255)
    if name == 'noise':  # light background with strong per-pixel noise
        noise = np.random.default_rng(rng.randrange(2**32)).normal(0, 28, (h, w, 1))
        return np.clip(205 + noise, 0, 255).repeat(3, axis=2), (0, 0, 0)
    if name == 'texture':  # paper-like blotches and fine grain
        grain = np.random.default_rng(rng.randrange(2**32)).normal(0, 8, (h, w, 1))
        tone = 175 + 70 * blobs(rng, w, h, 6) + grain
        tint = np.array([1.0, 0.95, 0.85], np.float32)
        return np.clip(tone * tint, 0, 255), (30, 15, 5)
    raise ValueError(name)


def blank(rng, name, w, h):
    if name == 'white':
        return np.full((h, w, 3), 255, np.float32)
    if name == 'smpte':  # videotestsrc's SMPTE bars: 7 bars, a strip, the bottom row
        bars = [(192, 192, 192), (192, 192, 0), (0, 192, 192), (0, 192, 0),
                (192, 0, 192), (192, 0, 0), (0, 0, 192)]
        strip = [(0, 0, 192), (19, 19, 19), (192, 0, 192), (19, 19, 19),
                 (0, 192, 192), (19, 19, 19), (192, 192, 192)]
        bottom = [(0, 33, 76), (255, 255, 255), (50, 0, 106), (19, 19, 19), (19, 19, 19)]
        image = np.zeros((h, w, 3), np.float32)
        for i in range(7):
            x0, x1 = i * w // 7, (i + 1) * w // 7
            image[:h * 2 // 3, x0:x1] = bars[i]
            image[h * 2 // 3:h * 3 // 4, x0:x1] = strip[i]
        for i in range(5):
            image[h * 3 // 4:, i * w * 5 // 28:(i + 1) * w * 5 // 28] = bottom[i]
        image[h * 3 // 4:, w * 25 // 28:] = (19, 19, 19)
        return image
    if name == 'noise':
        return np.random.default_rng(rng.randrange(2**32)).uniform(0, 255, (h, w, 3))
    if name == 'gradient':
        return gradient(w, h, (20, 60, 200), (240, 180, 40), False)
    raise ValueError(name)


# --- layout ---------------------------------------------------------------
def layout(rng, kind, rows, font, w, h, travel):
    """Text blocks [(text, x, baseline)] and the truth lines. Rows are a
    line pitch apart (1.3-1.8 the font's height); blocks keep a margin off
    the frame's edges, plus what a scroll moves them (`travel` either way)."""
    ascent, descent = font.getmetrics()
    pitch = int((ascent + descent) * rng.uniform(1.3, 1.8))
    margin = max(12, ascent // 2) + travel
    width = w - 2 * margin
    if kind == 'columns':  # rows of two blocks: one truth line each, left then right
        gap = max(3 * ascent, w // 10)
        column = (width - gap) // 2
        top = rng.randint(margin, max(margin, h - margin - rows * pitch))
        blocks, lines = [], []
        for r in range(rows):
            left, right = text_line(rng, font, column), text_line(rng, font, column)
            baseline = top + r * pitch + ascent
            blocks += [(left, margin, baseline), (right, margin + column + gap, baseline)]
            lines.append(f'{left} {right}')
        return blocks, lines
    if kind == 'scattered':  # each row somewhere in its own horizontal band
        band = (h - 2 * margin) // rows
        blocks = []
        for r in range(rows):
            text = text_line(rng, font, width)
            y = margin + r * band + rng.randint(0, max(0, band - ascent - descent))
            x = rng.randint(margin, max(margin, w - margin - int(font.getlength(text))))
            blocks.append((text, x, y + ascent))
        return blocks, [text for text, _, _ in blocks]
    total = (rows - 1) * pitch + ascent + descent
    if kind == 'center':
        top = (h - total) // 2
        texts = [text_line(rng, font, width) for _ in range(rows)]
        return [(text, (w - int(font.getlength(text))) // 2, top + r * pitch + ascent)
                for r, text in enumerate(texts)], texts
    assert kind == 'left', kind
    top = rng.randint(margin, max(margin, h - margin - total))
    x = rng.randint(margin, margin + width // 8)
    texts = [text_line(rng, font, w - margin - x) for _ in range(rows)]
    return [(text, x, top + r * pitch + ascent) for r, text in enumerate(texts)], texts


def check(blocks, font, w, h, shift):
    """Every block inside the frame at every shift; no two rows overlap."""
    boxes = []
    for text, x, y in blocks:
        x0, y0, x1, y1 = font.getbbox(text, anchor='ls')
        for dx, dy in shift:
            assert 0 <= x + x0 + dx and x + x1 + dx <= w and 0 <= y + y0 + dy and y + y1 + dy <= h, \
                (text, x, y, w, h)
        boxes.append((x + x0, y + y0, x + x1, y + y1))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)


def encode(frames, w, h, codec, path):
    """Frames (HxWx3 uint8) -> PATH through gst-launch-1.0. RGBx, not RGB:
    rawvideoparse pads RGB rows to 4 bytes, RGBx never needs padding."""
    with tempfile.NamedTemporaryFile(suffix='.rgbx') as raw:
        for frame in frames:
            raw.write(np.concatenate([frame, np.zeros((h, w, 1), np.uint8)], axis=2).tobytes())
        raw.flush()
        subprocess.run(['gst-launch-1.0', '-q', 'filesrc', f'location={raw.name}', '!',
                        'rawvideoparse', 'format=rgbx', f'width={w}', f'height={h}',
                        f'framerate={FPS}/1', '!', 'videoconvert', '!', *CODECS[codec][1], '!',
                        'filesink', f'location={path}'], check=True)


def vertical_line(rng, font, colour, w, h):
    """One line of text turned 90 degrees clockwise (read top down, as on a
    sign or a book's spine), somewhere in the frame: an RGBA layer and where
    it goes, and the line."""
    text = text_line(rng, font, h - 2 * max(12, h // 20))
    x0, y0, x1, y1 = font.getbbox(text, anchor='ls')
    layer = Image.new('RGBA', (x1 - x0 + 8, y1 - y0 + 8), (0, 0, 0, 0))
    ImageDraw.Draw(layer).text((4 - x0, 4 - y0), text, font=font, fill=tuple(colour) + (255,),
                               anchor='ls')
    layer = layer.rotate(-90, expand=True)
    x = rng.randint(w // 4, w - layer.width - 12)
    y = rng.randint(12, max(12, h - layer.height - 12))
    return layer, (x, y), [text]


def make_text_video(rng, spec):
    name, (w, h), codec, family, style, px, look_name, kind, rows, scroll = spec
    font_file = next(os.path.join(d, FONTS[family][style] + '.ttf') for d in FONT_DIRS
                     if os.path.exists(os.path.join(d, FONTS[family][style] + '.ttf')))
    font = ImageFont.truetype(font_file, px)
    background, colour = look(rng, look_name, w, h)
    if kind == 'vertical':
        layer, at, lines = vertical_line(rng, font, colour, w, h)
        frame = Image.fromarray(np.asarray(background).astype(np.uint8)).convert('RGBA')
        frame.alpha_composite(layer, at)
        return [np.asarray(frame.convert('RGB'))] * FRAMES, lines, {
            'font': family, 'style': style, 'px': px, 'look': look_name, 'layout': kind,
            'scroll': False}
    dx, dy = scroll or (0, 0)
    blocks, lines = layout(rng, kind, rows, font, w, h, max(abs(dx), abs(dy)) * FRAMES // 2)
    # a scrolling block starts off by half the way it travels, so it stays inside
    blocks = [(t, x - dx * (FRAMES - 1) // 2, y - dy * (FRAMES - 1) // 2) for t, x, y in blocks]
    check(blocks, font, w, h, [(dx * i, dy * i) for i in (0, FRAMES - 1)])
    base = Image.fromarray(np.asarray(background).astype(np.uint8))
    frames = []
    for i in range(FRAMES):
        frame = base.copy()
        draw = ImageDraw.Draw(frame)
        for text, x, y in blocks:
            draw.text((x + dx * i, y + dy * i), text, font=font, fill=colour, anchor='ls')
        frames.append(np.asarray(frame))
    return frames, lines, {'font': family, 'style': style, 'px': px, 'look': look_name,
                           'layout': kind, 'scroll': bool(scroll)}


def make_blank_video(rng, spec):
    name, (w, h), codec, background = spec
    frame = np.asarray(blank(rng, background, w, h)).astype(np.uint8)
    return [frame] * FRAMES, [], {'look': background}


SIZES = [(320, 240), (400, 300), (480, 360), (640, 360), (640, 480), (720, 576), (800, 600),
         (854, 480), (1000, 562), (1024, 768), (1280, 720), (1366, 768), (1600, 900),
         (1920, 1080)]
LOOKS = ['dark-on-light', 'light-on-dark', 'colour', 'gradient', 'gradient-dark', 'noise',
         'texture']
LAYOUTS = ['center', 'left', 'scattered', 'columns']


def random_specs(seed, count=24):
    """A held-out suite: `count` videos whose every property is drawn at
    random (and 2 without text), for checking that a change tuned on the
    fixed suite generalises. Different seeds give different suites."""
    rng = random.Random(f'holdout-{seed}')
    text, blank_specs = [], []
    for i in range(count):
        family = rng.choice(sorted(FONTS))
        size = rng.choice(SIZES)
        kind = rng.choice(LAYOUTS)
        px = rng.randint(14, 48) if size[0] >= 640 else rng.randint(14, 30)
        rows = rng.randint(1, 2 if kind == 'columns' or size[1] < 400 else 4)
        scroll = rng.choice([None] * 6 + [(0, -3), (-5, 0)])
        text.append((f'r{seed}-{i:02d}', size, rng.choice(sorted(CODECS)), family,
                     rng.choice(sorted(FONTS[family])), px, rng.choice(LOOKS), kind, rows, scroll))
    for i, background in enumerate(['white', 'noise']):
        blank_specs.append((f'r{seed}-blank-{background}', rng.choice(SIZES),
                            rng.choice(sorted(CODECS)), background))
    return text, blank_specs


def main():
    args = sys.argv[1:]
    smoke = '--smoke' in args
    args = [a for a in args if a != '--smoke']
    seed = None
    if '--random' in args and args.index('--random') + 1 < len(args):
        at = args.index('--random')
        seed = args[at + 1]
        del args[at:at + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    text_specs, blank_specs = (SMOKE, SMOKE_NO_TEXT) if smoke else (SUITE, NO_TEXT)
    if seed is not None:
        text_specs, blank_specs = random_specs(seed)
    for specs, make in ((text_specs, make_text_video), (blank_specs, make_blank_video)):
        for spec in specs:
            name, (w, h), codec = spec[:3]
            rng = random.Random(name)  # per video: one video's change leaves the others
            frames, lines, properties = make(rng, spec)
            file = f'{name}.{CODECS[codec][0]}'
            encode(frames, w, h, codec, os.path.join(outdir, file))
            truth = {'file': file, 'width': w, 'height': h, 'frames': FRAMES, 'fps': FPS,
                     'lines': lines, 'codec': codec, **properties}
            with open(os.path.join(outdir, name + '.json'), 'w', encoding='utf-8') as f:
                json.dump(truth, f, indent=1)
                f.write('\n')
            print(f'{file}: {" | ".join(lines) or "(no text)"}')


if __name__ == '__main__':
    main()
