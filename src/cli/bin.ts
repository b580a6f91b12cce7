#!/usr/bin/env -S node --max-semi-space-size=4
// The `playline` executable (package.json "bin"): always runs the CLI, however it was reached
// (npx, npm link, a global install: all through symlinks), unlike main.ts, which runs only
// when it is itself the program.
import { runAsProgram } from './main.js';

runAsProgram(process.argv);
