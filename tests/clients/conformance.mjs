// Kit's MCP tools as the official TypeScript clients read them.
//
// Reads a plan (JSON) on stdin, makes its calls with one client, and writes what the client
// saw (JSON) on stdout. The expectations live with the test that writes the plan
// (tests/clients/test_official_clients.py); this file only drives the client, so a result
// is exactly what a host built on that client would hand its model.
//
// Clients:
//   sdk        @modelcontextprotocol/sdk's Client over Streamable HTTP (initialize
//              handshake; it validates every structuredContent against the tool's
//              outputSchema, errors included), with a bearer token or its own OAuth flow.
//   remote     the SDK's Client through mcp-remote (a stdio proxy, as Claude Desktop and other
//              stdio-only hosts connect), with a bearer token in its --header.
//   inspector  MCP Inspector's CLI (`mcp-inspector-cli --method tools/call ...`), one
//              process per call, as a person would type it.
//   modern     the 2026-07-28 protocol, which SDK 1.32.2 does not speak yet: raw HTTP, each
//              result read with the SDK's own CallToolResultSchema and output validator.
//
// Plan: {"url", "client", "sessions": [{"name", "token"} | {"name", "oauth": {"cookie",
// "account", "redirect"}}], "calls": [{"id", "session", "tool", "arguments"}]}
// Output: {"sessions": {name: {"tools": [...], "protocolVersion"?, "oauth"?}},
//          "results": [{"id", "result"} | {"id", "thrown": {"name", "code", "message"}}]}

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const HERE = dirname(fileURLToPath(import.meta.url));
const INSPECTOR = join(HERE, "node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
const MCP_REMOTE = join(HERE, "node_modules/mcp-remote/dist/proxy.js");
const SCRATCH = mkdtempSync(join(tmpdir(), "kit-conformance-"));
process.on("exit", () => rmSync(SCRATCH, { recursive: true, force: true }));
const CLIENT_INFO = { name: "kit-conformance", version: "1.0.0" };
const MODERN = "2026-07-28";

function thrown(error) {
  return { name: error?.constructor?.name ?? "Error", code: error?.code ?? null, message: String(error?.message ?? error) };
}

// --- the SDK's Client ---------------------------------------------------------------------

async function remoteSession(url, session) {
  // As a host's config would start it; its own state goes to a scratch folder, not ~.
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, new URL("/mcp", url).href, "--header", "Authorization:${KIT_AUTH}"],
    env: { ...process.env, KIT_AUTH: `Bearer ${session.token}`, MCP_REMOTE_CONFIG_DIR: join(SCRATCH, session.name) },
    stderr: "ignore",
  });
  const client = new Client(CLIENT_INFO);
  await client.connect(transport);
  return { client, report: {} };
}

async function sdkSession(url, session, { remote = false } = {}) {
  const endpoint = new URL("/mcp", url);
  if (remote) return remoteSession(url, session);
  if (session.token) {
    const transport = new StreamableHTTPClientTransport(endpoint, {
      requestInit: { headers: { Authorization: `Bearer ${session.token}` } },
    });
    const client = new Client(CLIENT_INFO);
    await client.connect(transport);
    return { client, report: {} };
  }
  return oauthSession(endpoint, session.oauth);
}

// The member at the consent page: the browser holds their signed-in session cookie, shows
// the page, and the member allows the connection for one account.
async function consent(authorizationUrl, person) {
  const cookies = new Map(person.cookie.split("; ").map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const keep = (response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, value] = pair.split(/=(.*)/s);
      cookies.set(name, value);
    }
  };
  const page = await fetch(authorizationUrl, { headers: { Cookie: cookieHeader() }, redirect: "manual" });
  keep(page);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${html.slice(0, 300)}`);
  const form = new URLSearchParams();
  for (const tag of html.match(/<input[^>]*>/g) ?? []) {
    const name = tag.match(/name="([^"]+)"/);
    const value = tag.match(/value="([^"]*)"/);
    if (name) form.set(name[1], value ? value[1].replaceAll("&amp;", "&").replaceAll("&quot;", '"') : "");
  }
  form.set("allow", "on");
  form.set("account", person.account);
  const answer = await fetch(authorizationUrl, {
    method: "POST",
    headers: { Cookie: cookieHeader(), "Content-Type": "application/x-www-form-urlencoded" },
    body: form,
    redirect: "manual",
  });
  if (answer.status !== 302) throw new Error(`consent answered ${answer.status}: ${(await answer.text()).slice(0, 300)}`);
  return { location: new URL(answer.headers.get("location")), page: html };
}

async function oauthSession(endpoint, person) {
  const store = {};
  const report = { steps: [] };
  const provider = {
    get redirectUrl() {
      return person.redirect;
    },
    get clientMetadata() {
      return {
        client_name: "Conformance agent (TypeScript SDK)",
        redirect_uris: [person.redirect],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    state: () => "conformance-state",
    clientInformation: () => store.client,
    saveClientInformation: (info) => {
      store.client = info;
      report.steps.push("registered");
    },
    tokens: () => store.tokens,
    saveTokens: (tokens) => {
      store.tokens = tokens;
      report.steps.push("token");
    },
    redirectToAuthorization: async (url) => {
      report.steps.push("authorize");
      report.authorization = Object.fromEntries(url.searchParams);
      const { location, page } = await consent(url, person);
      report.consentPage = page;
      report.redirect = Object.fromEntries(location.searchParams);
      store.code = location.searchParams.get("code");
    },
    saveCodeVerifier: (verifier) => {
      store.verifier = verifier;
    },
    codeVerifier: () => store.verifier,
  };
  const first = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  try {
    await new Client(CLIENT_INFO).connect(first);
    throw new Error("the server let an unauthenticated client in");
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  await first.finishAuth(store.code);
  report.scope = store.tokens?.scope;
  const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  const client = new Client(CLIENT_INFO);
  await client.connect(transport);
  return { client, report };
}

async function runSdk(plan, options = {}) {
  const sessions = {};
  const out = { sessions: {}, results: [] };
  for (const session of plan.sessions) {
    const { client, report } = await sdkSession(plan.url, session, options);
    // Listing fills the client's output validators: every later callTool is checked.
    const { tools } = await client.listTools();
    sessions[session.name] = client;
    out.sessions[session.name] = {
      ...report,
      protocolVersion: client.transport?.protocolVersion ?? null,
      tools: tools.map((tool) => tool.name),
    };
  }
  for (const call of plan.calls) {
    try {
      const result = await sessions[call.session].callTool({ name: call.tool, arguments: call.arguments });
      out.results.push({ id: call.id, result });
    } catch (error) {
      out.results.push({ id: call.id, thrown: thrown(error) });
    }
  }
  for (const client of Object.values(sessions)) await client.close();
  return out;
}

// --- MCP Inspector's CLI ------------------------------------------------------------------

const run = promisify(execFile);

async function inspector(url, token, method, extra = []) {
  const args = [INSPECTOR, new URL("/mcp", url).href, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--method", method, ...extra];
  try {
    // From its own folder: the CLI finds its package.json relative to the working directory.
    const { stdout } = await run(process.execPath, args, { cwd: dirname(INSPECTOR), maxBuffer: 16 << 20 });
    return { result: JSON.parse(stdout) };
  } catch (error) {
    return { thrown: { name: "InspectorExit", code: error.code ?? null, message: String(error.stderr || error.message).trim() } };
  }
}

async function runInspector(plan) {
  const tokens = Object.fromEntries(plan.sessions.map((s) => [s.name, s.token]));
  const out = { sessions: {}, results: [] };
  for (const session of plan.sessions) {
    const listed = await inspector(plan.url, session.token, "tools/list");
    if (listed.thrown) throw new Error(`inspector tools/list: ${listed.thrown.message}`);
    out.sessions[session.name] = { tools: listed.result.tools.map((tool) => tool.name) };
  }
  for (const call of plan.calls) {
    const extra = ["--tool-name", call.tool];
    const pairs = Object.entries(call.arguments ?? {}).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
    if (pairs.length) extra.push("--tool-arg", ...pairs);
    out.results.push({ id: call.id, ...(await inspector(plan.url, tokens[call.session], "tools/call", extra)) });
  }
  return out;
}

// --- the 2026-07-28 protocol, read with the SDK's own schemas -----------------------------

async function modernRequest(url, token, method, params, name) {
  const headers = {
    Authorization: `Bearer ${token}`,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": method,
  };
  if (name) headers["Mcp-Name"] = name;
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
      },
    },
  };
  const response = await fetch(new URL("/mcp", url), { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await response.json();
  if (answer.error) {
    const error = new Error(answer.error.message);
    error.code = answer.error.code;
    throw error;
  }
  return answer.result;
}

async function runModern(plan) {
  const validator = new AjvJsonSchemaValidator();
  const tokens = Object.fromEntries(plan.sessions.map((s) => [s.name, s.token]));
  const out = { sessions: {}, results: [] };
  const checks = {};
  for (const session of plan.sessions) {
    const { tools } = ListToolsResultSchema.parse(await modernRequest(plan.url, session.token, "tools/list", {}));
    out.sessions[session.name] = { protocolVersion: MODERN, tools: tools.map((tool) => tool.name) };
    for (const tool of tools) if (tool.outputSchema) checks[tool.name] = validator.getValidator(tool.outputSchema);
  }
  for (const call of plan.calls) {
    try {
      const result = CallToolResultSchema.parse(
        await modernRequest(plan.url, tokens[call.session], "tools/call", { name: call.tool, arguments: call.arguments }, call.tool),
      );
      // What Client.callTool checks, in the same order (SDK 1.32.2, client/index.js).
      const check = checks[call.tool];
      if (check && !result.structuredContent && !result.isError) throw new Error("output schema but no structured content");
      if (check && result.structuredContent) {
        const verdict = check(result.structuredContent);
        if (!verdict.valid) throw new Error(`Structured content does not match the tool's output schema: ${verdict.errorMessage}`);
      }
      out.results.push({ id: call.id, result });
    } catch (error) {
      out.results.push({ id: call.id, thrown: thrown(error) });
    }
  }
  return out;
}

// --- main ---------------------------------------------------------------------------------

const plan = JSON.parse(readFileSync(0, "utf8"));
const runners = {
  sdk: runSdk,
  remote: (plan) => runSdk(plan, { remote: true }),
  inspector: runInspector,
  modern: runModern,
};
try {
  process.stdout.write(JSON.stringify(await runners[plan.client](plan)));
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(2);
}
