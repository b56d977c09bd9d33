// An MCP server built with the official SDK whose tools/list pages (two tools per page, the
// cursor is the next index), so the client's nextCursor loop runs against a real peer.
// Run: node paging_server.mjs <servers dir>   (the folder scripts/install-mcp-servers.sh fills)
import { pathToFileURL } from "node:url";

const sdk = `${process.argv[2]}/node_modules/@modelcontextprotocol/sdk/dist/esm`;
const load = (path) => import(pathToFileURL(`${sdk}/${path}`).href);
const { Server } = await load("server/index.js");
const { StdioServerTransport } = await load("server/stdio.js");
const { ListToolsRequestSchema, CallToolRequestSchema } = await load("types.js");

const tools = Array.from({ length: 5 }, (_, i) => ({
  name: `page_tool_${i}`,
  description: `Tool number ${i}`,
  inputSchema: { type: "object", properties: {} },
}));
const server = new Server({ name: "pager", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  const start = Number(request.params?.cursor ?? 0);
  const next = start + 2;
  const page = { tools: tools.slice(start, next) };
  if (next < tools.length) page.nextCursor = String(next);
  return page;
});
server.setRequestHandler(CallToolRequestSchema, async (request) => ({
  content: [{ type: "text", text: `called ${request.params.name}` }],
}));
await server.connect(new StdioServerTransport());
