#!/usr/bin/python3
"""Scores OCR results on the suite make_suite.py wrote.

    score.py SUITE RESULTS... [--reference REF] [--max-cer PERCENT] [--no-text-regions]

RESULTS (ours; several: one column each, e.g. before and after a change)
and REF (ort_reference.js) hold NAME.jsonl per video NAME: one JSON line per
frame, npumetaconvert's shape ({"pts": ns, "rois": [...]}; the reference
says {"frame": i} instead of a pts). Each video is scored on frames 0, the
middle one and the last one, the same for every column.

The text of a frame: its regions with text in reading order, lines top to
bottom joined by "\\n", regions left to right within a line joined by " ",
compared with the truth's lines joined by "\\n". Both sides are NFKC
normalised first: PP-OCR's dictionary has full-width forms of ASCII
punctuation ("（" for "("), which are the same character read.
CER of a video: the mean over its scored frames of edit distance / truth
length. Overall CER: all edit distances over all truth lengths; text read on
a video without text adds its length to the distances; a second figure
takes the spaces out of both texts first (PP-OCRv4 drops many spaces
between words: the rest is what it misreads). Regions: every roi (with or
without text), summed over the scored frames.

Prints the table and the overall figures, flags ("!") each video where a
RESULTS column is worse than the reference. Exits 1 when a RESULTS column's
overall CER exceeds --max-cer, or with --no-text-regions, when it found any
region on a video without text.
"""
import argparse
import glob
import json
import os
import sys
import unicodedata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'pipelines'))
from ocr_text import distance, reading_lines  # noqa: E402


def read(rois):
    """A frame's text in reading order (ocr_text.reading_lines): lines joined
    by newlines, regions in a line by spaces."""
    text = '\n'.join(' '.join(line) for line in reading_lines(rois))
    return unicodedata.normalize('NFKC', text)


def load(path, fps):
    """{frame index: rois} from a results file ({} when it is missing). A
    pts counts from the first frame's: an MP4 of x264's (B-frames) starts
    at 0.25 s."""
    frames = {}
    if os.path.exists(path):
        with open(path, encoding='utf-8') as f:
            lines = [json.loads(line) for line in f if line.strip()]
        for frame in lines:
            index = frame['frame'] if 'frame' in frame else \
                round((frame['pts'] - lines[0]['pts']) * fps / 1e9)
            frames[index] = frame['rois']
    return frames


def score(truth, results, indices):
    """(CER, edit distances, truth length, the same two with spaces taken
    out of both texts, regions, middle frame's text) of one video's results
    on the scored frames."""
    expected = unicodedata.normalize('NFKC', '\n'.join(truth['lines']))
    distances = spaceless = regions = 0
    cers = []
    for i in indices:
        rois = results.get(i, [])
        text = read(rois)
        d = distance(text, expected)
        distances += d
        spaceless += distance(text.replace(' ', ''), expected.replace(' ', ''))
        regions += len(rois)
        cers.append(d / len(expected) if expected else 0.0)
    return (sum(cers) / len(cers), distances, len(expected) * len(indices), spaceless,
            len(expected.replace(' ', '')) * len(indices), regions,
            read(results.get(indices[len(indices) // 2], [])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('suite')
    parser.add_argument('results', nargs='+')
    parser.add_argument('--reference')
    parser.add_argument('--max-cer', type=float, help='percent')
    parser.add_argument('--no-text-regions', action='store_true')
    args = parser.parse_args()

    columns = [(os.path.basename(os.path.normpath(d)), d) for d in args.results]
    if args.reference:
        columns.append(('reference', args.reference))
    totals = {name: [0, 0, 0, 0] for name, _ in columns}  # as score() counts them
    blank_regions = {name: 0 for name, _ in columns}
    worse, rows, texts = [], [], []
    for path in sorted(glob.glob(os.path.join(args.suite, '*.json'))):
        with open(path, encoding='utf-8') as f:
            truth = json.load(f)
        name = os.path.splitext(os.path.basename(path))[0]
        indices = sorted({0, truth['frames'] // 2, truth['frames'] - 1})
        scores = {column: score(truth, load(os.path.join(d, name + '.jsonl'), truth['fps']), indices)
                  for column, d in columns}
        font = f"{truth['font']}-{truth['style']} {truth['px']}px" if 'font' in truth else '(no text)'
        row = [name, f"{truth['width']}x{truth['height']}", font, truth['codec'],
               truth['look'] + (' ' + truth['layout'] if 'layout' in truth else '')]
        for column, _ in columns:
            cer, *counts, regions, _ = scores[column]
            totals[column] = [t + c for t, c in zip(totals[column], counts)]
            flag = ''
            if args.reference and column != 'reference' and truth['lines'] and \
                    cer > scores['reference'][0] + 1e-9:
                flag = '!'
                worse.append(f'{name} ({column})')
            if not truth['lines']:
                blank_regions[column] += regions
            row += [f'{100 * cer:.1f}{flag}' if truth['lines'] else '-', str(regions)]
        rows.append(row)
        ours = max(scores[column][0] for column, _ in columns if column != 'reference')
        if ours > 0:
            texts.append((ours, name, truth, {c: scores[c][-1] for c, _ in columns}))

    header = ['video', 'size', 'font', 'codec', 'look'] + \
        [h for column, _ in columns for h in (f'CER% {column}', 'regions')]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print('  '.join(c.ljust(w) if i < 5 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    print()
    failed = False
    for column, _ in columns:
        d, n, d_spaceless, n_spaceless = totals[column]
        cer = 100.0 * d / n if n else 0.0
        print(f'overall CER {column}: {cer:.2f}% ({d} edits / {n} characters), '
              f'{100.0 * d_spaceless / max(n_spaceless, 1):.2f}% with spaces ignored; '
              f'regions on videos without text: {blank_regions[column]}')
        if column != 'reference':
            failed |= args.max_cer is not None and cer > args.max_cer
            failed |= args.no_text_regions and blank_regions[column] > 0
    if worse:
        print(f'worse than the reference on {len(worse)}: {", ".join(worse)}')
    if texts:
        print('\nworst videos (middle frame; lines separated by " | "):')
        for cer, name, truth, read_texts in sorted(texts, key=lambda t: -t[0])[:8]:
            print(f'  {name} ({100 * cer:.1f}%)\n    {"truth":>10}: {" | ".join(truth["lines"])}')
            for column, text in read_texts.items():
                print(f'    {column:>10}: {text.replace(chr(10), " | ")}')
    if args.max_cer is not None or args.no_text_regions:
        print('FAIL' if failed else 'PASS')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
