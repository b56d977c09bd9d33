// Loads the addon: LOOM_NODE_ADDON (the tests' build), else node/build/loom.node.
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makeError } from "./errors.mjs";

const require = createRequire(import.meta.url);
// A relative LOOM_NODE_ADDON is a path from the working directory (require would take
// "build/..." for a package name).
const addon = process.env.LOOM_NODE_ADDON;
const path = addon ? resolve(addon) : fileURLToPath(new URL("../build/loom.node", import.meta.url));
export const native = require(path);
native.setErrorFactory(makeError);
