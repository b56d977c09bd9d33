// Loads the addon: LOOM_NODE_ADDON (the tests' build), else node/build/loom.node.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { makeError } from "./errors.mjs";

const require = createRequire(import.meta.url);
const path = process.env.LOOM_NODE_ADDON ?? fileURLToPath(new URL("../build/loom.node", import.meta.url));
export const native = require(path);
native.setErrorFactory(makeError);
