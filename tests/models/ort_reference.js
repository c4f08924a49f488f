// Runs a model with ONNX Runtime (onnxruntime-node from npm) on .npy inputs:
// writes each output as OUTDIR/NAME.npy and prints one JSON line with the
// latency figures and peak RSS, measured like npu-run does.
//   node ort_reference.js MODEL OUTDIR NAME=INPUT.npy... [--threads N]
//        [--iterations N] [--warmup N]
// ORT_NODE_MODULE points at the onnxruntime-node package.
'use strict';
const baselineRssKib = process.memoryUsage().rss / 1024; // Node.js itself, before ORT
const fs = require('fs');
const path = require('path');

const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');

const types = {'<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array],
               '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array],
               '|b1': ['bool', Uint8Array]};

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  const headerLength = bytes[6] === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = bytes[6] === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
      .map((s) => s.trim()).filter((s) => s.length).map(Number);
  const [type, Array] = types[descr];
  const data = bytes.subarray(start + headerLength);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return new ort.Tensor(type, new Array(copy.buffer), shape);
}

function writeNpy(file, tensor) {
  const descr = Object.keys(types).find((k) => types[k][0] === tensor.type);
  const dims = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const preamble = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(preamble);
  preamble[6] = 1;
  preamble.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([preamble, Buffer.from(header, 'latin1'), data]));
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args.splice(i, 2)[1]) : fallback;
  };
  const threads = option('--threads', 2);
  const iterations = option('--iterations', 20);
  const warmup = option('--warmup', 3);
  const [model, outdir, ...inputs] = args;
  const loadStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all'});
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  const feeds = {};
  for (const pair of inputs) {
    const at = pair.indexOf('=');
    feeds[pair.slice(0, at)] = readNpy(pair.slice(at + 1));
  }
  let results;
  for (let i = 0; i < warmup; i++) results = await session.run(feeds);
  const latencies = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  latencies.sort((a, b) => a - b);
  fs.mkdirSync(outdir, {recursive: true});
  for (const name of session.outputNames)
    writeNpy(path.join(outdir, name.replace(/[/\\:]/g, '_') + '.npy'), results[name]);
  console.log(JSON.stringify({
    load_ms: loadMs,
    latency_ms: {min: latencies[0], median: latencies[Math.floor(iterations / 2)],
                 p90: latencies[Math.floor(0.9 * (iterations - 1))],
                 max: latencies[iterations - 1]},
    peak_rss_kib: process.resourceUsage().maxRSS,
    node_baseline_rss_kib: Math.round(baselineRssKib),
  }));
}

main().catch((error) => {
  console.error(`ort_reference: ${error.message}`);
  process.exit(1);
});
