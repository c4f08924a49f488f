"""Reading OCR results (npumetaconvert's JSON lines): the text of a frame in
reading order and the edit distance to the truth. Shared by pipelines/ocr.sh
and the OCR suite's scorer (tests/ocr/score.py)."""


def distance(a, b):
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[len(b)]


def reading_lines(rois):
    """The texts of a frame's regions, as lines top to bottom, each a list of
    texts left to right. A region joins the current line when its middle is
    above the bottom of the line's first region; a region's own leading and
    trailing spaces go (the space joining it to the next is the caller's)."""
    lines = []
    regions = (r for r in rois if r.get('text', {}).get('text', '').strip())
    for r in sorted(regions, key=lambda r: r['y'] + r['h'] / 2):
        if lines and r['y'] + r['h'] / 2 < lines[-1][0]['y'] + lines[-1][0]['h']:
            lines[-1].append(r)
        else:
            lines.append([r])
    return [[r['text']['text'].strip() for r in sorted(line, key=lambda r: r['x'])]
            for line in lines]
