// Records llama.cpp's own logits for the K-quant files that make_kquant_model.py wrote: for each
// file and prompt, the raw logits at every position (float32 little-endian [positions, vocab])
// and the greedy continuation taken from them with the logits of each of its steps, into
// reference.json here. llama.cpp runs through
// npm's node-llama-cpp (its prebuilt CPU build), on the CPU:
//
//   cd /tmp/somewhere && npm install node-llama-cpp@3.22.1
//   NODE_PATH=/tmp/somewhere/node_modules node tests/data/engine/kquant/llama_logits.mjs
//
// (README.md gives the versions the committed files were made with.)
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(process.env.NODE_PATH ?? ".", "x.js"));
const { getLlama } = await import(require.resolve("node-llama-cpp"));

const files = ["q2_k", "q3_k_m", "q4_k_m"];
// Token ids of the byte-level BPE vocabulary (BOS 0 first): prompts 0 and 2 of ../llama-gqa.
const prompts = [
  [0, 44, 73, 80, 337, 16, 336, 274, 624, 5],
  [0, 333, 295, 12, 92, 314, 263, 348, 225, 92, 14, 14, 22],
];
const kGreedy = 16;
const vocab = 1024;

const llama = await getLlama({ gpu: false, build: "never" });
const reference = { llama_cpp: llama.llamaCppRelease, files: {} };
for (const name of files) {
  const model = await llama.loadModel({ modelPath: join(here, `kquant-llama.${name}.gguf`) });
  const rows = [];
  for (const [p, ids] of prompts.entries()) {
    const context = await model.createContext({ contextSize: 128, batchSize: 128 });
    const sequence = context.getSequence();
    const logitsOf = (out) => {
      const row = new Float32Array(vocab);
      for (const [token, value] of out.next.logits) row[token] = value;
      return row;
    };
    const argmax = (row) => row.reduce((best, v, i) => (v > row[best] ? i : best), 0);
    const outputs = await sequence.controlledEvaluate(
      ids.map((id) => [id, { generateNext: { logits: true } }]));
    const logits = outputs.map(logitsOf);
    // Step i chooses greedy[i] from steps[i]: the prompt's last row, then each token's.
    const greedy = [];
    const steps = [logits[logits.length - 1]];
    for (let i = 0; i < kGreedy; ++i) {
      greedy.push(argmax(steps[i]));
      if (i + 1 === kGreedy) break;
      const [out] = await sequence.controlledEvaluate(
        [[greedy[i], { generateNext: { logits: true } }]]);
      steps.push(logitsOf(out));
    }
    const stepsFile = `llama_cpp.${name}.prompt${p}.greedy.f32`;
    const stepRows = new Float32Array(kGreedy * vocab);
    steps.forEach((row, i) => stepRows.set(row, i * vocab));
    writeFileSync(join(here, stepsFile), Buffer.from(stepRows.buffer));
    const file = `llama_cpp.${name}.prompt${p}.f32`;
    const all = new Float32Array(ids.length * vocab);
    logits.forEach((row, i) => all.set(row, i * vocab));
    writeFileSync(join(here, file), Buffer.from(all.buffer));
    rows.push({ prompt_ids: ids, logits_file: file, logits_shape: [ids.length, vocab],
                argmax_per_position: logits.map(argmax), greedy: greedy,
                greedy_logits_file: stepsFile });
    await context.dispose();
  }
  reference.files[`kquant-llama.${name}.gguf`] = rows;
  await model.dispose();
}
writeFileSync(join(here, "reference.json"), JSON.stringify(reference, null, 1) + "\n");
console.log("llama.cpp", reference.llama_cpp, "wrote reference.json");
