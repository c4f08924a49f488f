// Runs a model with ONNX Runtime (onnxruntime-node from npm) on .npy inputs:
// writes each output as OUTDIR/NAME.npy and prints one JSON line with the
// latency figures and peak RSS, measured like npu-run does.
//   node ort_reference.js MODEL OUTDIR NAME=INPUT.npy... [--threads N]
//        [--iterations N] [--warmup N] [--profile]
// --profile adds "profile_ms": each operator type's kernel time per timed
// run, from ORT's own profiler (its fused operators under their own names),
// and "profile_nodes": each node's operator type and fastest timed run (ms).
// ORT_NODE_MODULE points at the onnxruntime-node package.
'use strict';
const baselineRssKib = process.memoryUsage().rss / 1024; // Node.js itself, before ORT
const fs = require('fs');
const os = require('os');
const path = require('path');

const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');

const types = {'<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array],
               '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array],
               '|b1': ['bool', Uint8Array]};

// This process's peak resident set (VmHWM), KiB. Not resourceUsage().maxRSS:
// Linux carries getrusage's peak across exec from the process that started
// Node.js (zoo.py's Python).
function peakRssKib() {
  return Number(/VmHWM:\s*(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
}

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

// Kernel time per run of each operator type over the runs after the first
// `warmup` (ORT's trace holds one "model_run" event per run), and each
// node's fastest run.
function operatorTimes(traceFile, warmup, iterations) {
  const events = JSON.parse(fs.readFileSync(traceFile, 'utf8'));
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run')
      .sort((a, b) => a.ts - b.ts);
  const timedFrom = warmup > 0 ? runs[warmup - 1].ts + runs[warmup - 1].dur : 0;
  const times = {};
  const nodes = {};
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < timedFrom) continue;
    const op = e.args.op_name;
    times[op] = (times[op] || 0) + e.dur / 1000 / iterations;
    const node = e.name.slice(0, -'_kernel_time'.length);
    const fastest = nodes[node] ? Math.min(nodes[node].ms, e.dur / 1000) : e.dur / 1000;
    nodes[node] = {op, ms: fastest};
  }
  return {times, nodes};
}

async function main() {
  const args = process.argv.slice(2);
  const profileAt = args.indexOf('--profile');
  if (profileAt >= 0) args.splice(profileAt, 1);
  const traceDir = profileAt >= 0 ? fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-')) : null;
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
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    enableProfiling: traceDir !== null,
    profileFilePrefix: traceDir ? path.join(traceDir, 'trace') : undefined});
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
  let profile = {};
  if (traceDir) {
    session.endProfiling();
    const traces = fs.readdirSync(traceDir);
    profile = operatorTimes(path.join(traceDir, traces[0]), warmup, iterations);
    fs.rmSync(traceDir, {recursive: true});
  }
  fs.mkdirSync(outdir, {recursive: true});
  for (const name of session.outputNames)
    writeNpy(path.join(outdir, name.replace(/[/\\:]/g, '_') + '.npy'), results[name]);
  console.log(JSON.stringify({
    load_ms: loadMs,
    latency_ms: {min: latencies[0], median: latencies[Math.floor(iterations / 2)],
                 p90: latencies[Math.floor(0.9 * (iterations - 1))],
                 max: latencies[iterations - 1]},
    peak_rss_kib: peakRssKib(),
    node_baseline_rss_kib: Math.round(baselineRssKib),
    profile_ms: profile.times,
    profile_nodes: profile.nodes,
  }));
}

main().catch((error) => {
  console.error(`ort_reference: ${error.message}`);
  process.exit(1);
});
