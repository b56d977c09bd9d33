#!/usr/bin/env node
// loom-node --app ./app.mjs[#export] <subcommand> ...: the whole `loom` command line for the
// workflows, tools and agents of an App a module exports (default export name: `app`):
// run, resume, signal, worker, serve, ls, log, ... as docs/cli.md documents them.
import { pathToFileURL } from "node:url";
import path from "node:path";
import { App } from "../index.mjs";

const args = process.argv.slice(2);
const at = args.findIndex((a) => a === "--app" || a.startsWith("--app="));
let app = new App();
if (at >= 0) {
  const spec = args[at].startsWith("--app=") ? args[at].slice(6) : args[at + 1];
  args.splice(at, args[at].startsWith("--app=") ? 1 : 2);
  if (!spec) {
    console.error("loom: --app needs MODULE[#EXPORT], e.g. --app ./agents.mjs#app");
    process.exit(2);
  }
  const [file, name = "app"] = spec.split("#");
  let module;
  try {
    module = await import(pathToFileURL(path.resolve(file)).href);
  } catch (e) {
    console.error(`loom: --app ${spec}: cannot import ${file}: ${e.message}`);
    process.exit(2);
  }
  if (!(module[name] instanceof App)) {
    console.error(`loom: --app ${spec}: ${file} exports no App named ${name}`);
    process.exit(2);
  }
  app = module[name];
}
process.exitCode = await app.main(args);
