// The OCR suite's reference: PP-OCRv4 (detector + recogniser) on ONNX
// Runtime for Node.js, with PP-OCR's own pre- and post-processing written
// out (PaddleOCR's tools/infer/predict_det.py, predict_rec.py and their
// DetResizeForTest, NormalizeImage, DBPostProcess, CTCLabelDecode), so our
// pipeline is judged against what PP-OCR itself reads.
//
//   node ort_reference.js MODELS W H FRAMES.rgb [--frames 0,4,7] [--stride BYTES]
//        [--limit 960 | --native] [--threads 2]
//
// MODELS holds ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx and
// ppocr_keys_v1.txt. FRAMES.rgb: W x H RGB frames one after the other, rows
// STRIDE bytes apart (default 3 W; GStreamer pads RGB rows to 4 bytes).
// Prints one JSON line per frame, shaped like npumetaconvert's:
//   {"frame": 0, "rois": [{"label": "text", "x":.., "y":.., "w":.., "h":..,
//     "text-region": {"confidence":..}, "text": {"text":.., "confidence":..}}]}
// in PP-OCR's reading order; every detected box is a roi, "text" only where
// the recogniser's confidence reaches PP-OCR's drop_score (0.5).
// ORT_NODE_MODULE points at the onnxruntime-node package.
'use strict';
const fs = require('fs');
const path = require('path');

const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');

// Both models get RGB (PaddleOCR's cv2 reading hands them BGR; on the smoke
// videos that changed one space).
const DET = {mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225], thresh: 0.3,
             boxThresh: 0.6, unclipRatio: 1.5, minSize: 3, maxCandidates: 1000};
const REC = {height: 48, minWidth: 320, dropScore: 0.5};

// Python's round() (half to even), which PP-OCR's resize arithmetic uses.
function pyRound(v) {
  const r = Math.round(v);
  return Math.abs(v % 1) === 0.5 && r % 2 ? r - 1 : r;
}

// Bilinear resize of an RGB image (bytes or floats, rows `stride` apart) to
// dw x dh floats, pixel centres aligned as OpenCV's INTER_LINEAR does.
function resize(src, sw, sh, stride, dw, dh) {
  const dst = new Float32Array(dw * dh * 3);
  const taps = (d, s, n) => {
    const f = Math.min(Math.max((d + 0.5) * s / n - 0.5, 0), s - 1);
    const i = Math.floor(f);
    return [i, Math.min(i + 1, s - 1), f - i];
  };
  const xs = Array.from({length: dw}, (_, x) => taps(x, sw, dw));
  for (let y = 0; y < dh; y++) {
    const [y0, y1, fy] = taps(y, sh, dh);
    for (let x = 0; x < dw; x++) {
      const [x0, x1, fx] = xs[x];
      for (let c = 0; c < 3; c++) {
        const top = src[y0 * stride + x0 * 3 + c] * (1 - fx) + src[y0 * stride + x1 * 3 + c] * fx;
        const bottom = src[y1 * stride + x0 * 3 + c] * (1 - fx) + src[y1 * stride + x1 * 3 + c] * fx;
        dst[(y * dw + x) * 3 + c] = top * (1 - fy) + bottom * fy;
      }
    }
  }
  return dst;
}

// HWC floats 0..255 -> NCHW tensor, (x / 255 - mean) / std per channel,
// `width` columns (zeros right of the image: the recogniser's padding).
function tensor(hwc, w, h, mean, std, width = w) {
  const data = new Float32Array(3 * h * width);
  for (let c = 0; c < 3; c++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++)
        data[(c * h + y) * width + x] = (hwc[(y * w + x) * 3 + c] / 255 - mean[c]) / std[c];
  return new ort.Tensor('float32', data, [1, 3, h, width]);
}

// DBPostProcess on the probability map: boxes (frame coordinates) with their
// score. Connected components of the thresholded map stand for OpenCV's
// contours, their bounding rectangles for minAreaRect (horizontal text):
// corners at the extreme pixels' coordinates, as PP-OCR's contour points are.
function dbBoxes(prob, mw, mh, width, height) {
  const label = new Int32Array(mw * mh).fill(-1);
  const boxes = [];
  for (let start = 0; start < mw * mh && boxes.length < DET.maxCandidates; start++) {
    if (prob[start] <= DET.thresh || label[start] >= 0) continue;
    let [x0, y0, x1, y1] = [mw, mh, 0, 0];
    const stack = [start];
    label[start] = start;
    while (stack.length) {  // 8-connected, as OpenCV's contours follow
      const p = stack.pop(), px = p % mw, py = (p - px) / mw;
      x0 = Math.min(x0, px), x1 = Math.max(x1, px), y0 = Math.min(y0, py), y1 = Math.max(y1, py);
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const qx = px + dx, qy = py + dy, q = qy * mw + qx;
          if (qx >= 0 && qx < mw && qy >= 0 && qy < mh && label[q] < 0 && prob[q] > DET.thresh) {
            label[q] = start;
            stack.push(q);
          }
        }
    }
    const w = x1 - x0, h = y1 - y0;
    if (Math.min(w, h) < DET.minSize) continue;
    let sum = 0;  // box_score_fast: the mean probability inside the box
    for (let y = y0; y <= y1; y++)
      for (let x = x0; x <= x1; x++) sum += prob[y * mw + x];
    const score = sum / ((w + 1) * (h + 1));
    if (score < DET.boxThresh) continue;
    // unclip: push every side out by area * ratio / perimeter
    const d = w * h * DET.unclipRatio / (2 * (w + h));
    if (Math.min(w, h) + 2 * d < DET.minSize + 2) continue;
    const sx = width / mw, sy = height / mh;
    const clip = (v, max) => Math.min(Math.max(pyRound(v), 0), max);
    const box = {x0: clip((x0 - d) * sx, width), y0: clip((y0 - d) * sy, height),
                 x1: clip((x1 + d) * sx, width), y1: clip((y1 + d) * sy, height), score};
    if (box.x1 - box.x0 > 3 && box.y1 - box.y0 > 3) boxes.push(box);  // filter_tag_det_res
  }
  return boxes;
}

// PP-OCR's sorted_boxes: top to bottom, then boxes within 10 px of each
// other's top in left-to-right order.
function sortBoxes(boxes) {
  boxes.sort((a, b) => a.y0 - b.y0 || a.x0 - b.x0);
  for (let i = 0; i < boxes.length - 1; i++)
    for (let j = i; j >= 0; j--) {
      if (Math.abs(boxes[j + 1].y0 - boxes[j].y0) < 10 && boxes[j + 1].x0 < boxes[j].x0)
        [boxes[j], boxes[j + 1]] = [boxes[j + 1], boxes[j]];
      else break;
    }
  return boxes;
}

// CTC greedy decoding: the best class per step, repeats merged, blanks
// (class 0) dropped; classes 1..N are the dictionary's lines, N + 1 space.
function ctcDecode(probs, steps, classes, dictionary) {
  let text = '', confidence = 0, count = 0, previous = -1;
  for (let t = 0; t < steps; t++) {
    let best = 0;
    for (let c = 1; c < classes; c++)
      if (probs[t * classes + c] > probs[t * classes + best]) best = c;
    if (best !== 0 && best !== previous) {
      text += best <= dictionary.length ? dictionary[best - 1] : ' ';
      confidence += probs[t * classes + best];
      count++;
    }
    previous = best;
  }
  return {text, confidence: count ? confidence / count : 0};
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? args.splice(i, 2)[1] : fallback;
  };
  const native = args.includes('--native');
  if (native) args.splice(args.indexOf('--native'), 1);
  const limit = Number(option('--limit', 960));
  const threads = Number(option('--threads', 2));
  const framesOption = option('--frames', null);
  const strideOption = option('--stride', null);
  if (args.length !== 4) {
    console.error('usage: node ort_reference.js MODELS W H FRAMES.rgb [--frames 0,4,7] ' +
                  '[--stride BYTES] [--limit 960 | --native] [--threads 2]');
    process.exit(2);
  }
  const [models, width, height, file] = [args[0], Number(args[1]), Number(args[2]), args[3]];
  const stride = Number(strideOption || width * 3);
  const frameBytes = stride * height;
  const count = Math.floor(fs.statSync(file).size / frameBytes);
  const frames = framesOption ? framesOption.split(',').map(Number)
                              : Array.from({length: count}, (_, i) => i);
  const dictionary = fs.readFileSync(path.join(models, 'ppocr_keys_v1.txt'), 'utf8')
      .split('\n').filter((line, i, all) => i < all.length - 1 || line !== '');
  const options = {intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all'};
  const det = await ort.InferenceSession.create(path.join(models, 'ch_PP-OCRv4_det_infer.onnx'), options);
  const rec = await ort.InferenceSession.create(path.join(models, 'ch_PP-OCRv4_rec_infer.onnx'), options);

  // DetResizeForTest, limit_type max: the longer side at most `limit`, both
  // sides rounded to multiples of 32 (--native: the frame's own size, rounded)
  const ratio = !native && Math.max(width, height) > limit ? limit / Math.max(width, height) : 1;
  const detW = Math.max(pyRound(Math.floor(width * ratio) / 32) * 32, 32);
  const detH = Math.max(pyRound(Math.floor(height * ratio) / 32) * 32, 32);

  const fd = fs.openSync(file, 'r');
  for (const index of frames) {
    if (!(index >= 0 && index < count)) throw new Error(`${file}: no frame ${index} (${count} frames)`);
    const frame = Buffer.alloc(frameBytes);
    fs.readSync(fd, frame, 0, frameBytes, index * frameBytes);
    const input = tensor(resize(frame, width, height, stride, detW, detH), detW, detH, DET.mean, DET.std);
    const prob = Object.values(await det.run({[det.inputNames[0]]: input}))[0];
    const rois = [];
    for (const box of sortBoxes(dbBoxes(prob.data, detW, detH, width, height))) {
      // the crop (get_rotate_crop_image: the box's own pixels) scaled to
      // height 48 keeping its aspect, normalised, then zeros to the right up
      // to 320 wide (resize_norm_img; a wider crop is squeezed to whole
      // pixels). PP-OCR turns crops 1.5 times taller than wide by 90 degrees
      // counter-clockwise (np.rot90), for vertical text.
      let w = box.x1 - box.x0, h = box.y1 - box.y0;
      let crop = frame.subarray(box.y0 * stride + box.x0 * 3), cropStride = stride;
      if (h >= 1.5 * w) {
        const turned = new Uint8Array(w * h * 3); // h wide, w tall: out[i][j] = in[j][w-1-i]
        for (let i = 0; i < w; i++)
          for (let j = 0; j < h; j++)
            for (let c = 0; c < 3; c++)
              turned[(i * h + j) * 3 + c] = crop[j * stride + (w - 1 - i) * 3 + c];
        [crop, cropStride, w, h] = [turned, h * 3, h, w];
      }
      const ideal = REC.height * w / h;
      const recW = Math.max(REC.minWidth, Math.floor(ideal));
      const scaledW = Math.min(Math.ceil(ideal), recW);
      const scaled = resize(crop, w, h, cropStride, scaledW, REC.height);
      const out = Object.values(await rec.run({
        [rec.inputNames[0]]: tensor(scaled, scaledW, REC.height, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5], recW)}))[0];
      const read = ctcDecode(out.data, out.dims[1], out.dims[2], dictionary);
      const roi = {id: rois.length, label: 'text', x: box.x0, y: box.y0, w: box.x1 - box.x0,
                   h: box.y1 - box.y0,
                   'text-region': {confidence: box.score}};
      if (read.text && read.confidence >= REC.dropScore) roi.text = read;
      rois.push(roi);
    }
    console.log(JSON.stringify({frame: index, rois}));
  }
  fs.closeSync(fd);
}

main().catch((e) => {
  console.error(`ort_reference.js: ${e.message}`);
  process.exit(1);
});
