#!/usr/bin/env node
import { runKubectlTally } from './main.js';

// kubectl runs a plugin with the words after its name; process.exitCode (not exit()) lets stdout drain when piped.
process.exitCode = await runKubectlTally(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
