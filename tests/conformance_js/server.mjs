// An independent implementation of the interview's serving side, in JavaScript, written
// from docs/profile.md and the interview draft only (no code of this project read), to
// show the conformance vectors can be met by another implementation.
//
//   node server.mjs --card CARD.json --proposals PROPOSALS.json --port N
//
// PROPOSALS.json maps each proposal url to its text. No dependencies: node:http and
// node:crypto. It stands in for a host too: any JSON-RPC method it does not serve gets
// -32601, any other route 404.

import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const URI = "https://agentsow.com/extensions/a2a-interview/v1";
const TERMS_URI = "https://agentsow.com/extensions/a2a-terms/v1";
const QUESTIONS = ["identity", "capabilities", "usage", "terms", "refusals"];
const SELECTING = new Set(["usage", "terms"]);

// --- RFC 8785 for the JSON values a parsed document holds --------------------------------

function jcs(value) {
  if (value === null || typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error("no JCS form for a non-finite number");
    return Object.is(value, -0) ? "0" : String(value); // ECMAScript Number::toString
  }
  if (typeof value === "string") return JSON.stringify(value); // RFC 8785 §3.2.2.2
  if (Array.isArray(value)) return "[" + value.map(jcs).join(",") + "]";
  // Keys sorted by their UTF-16 code units (RFC 8785 §3.2.3): JS string order.
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return "{" + keys.map((k) => JSON.stringify(k) + ":" + jcs(value[k])).join(",") + "}";
}

const sha256 = (text) => "sha256:" + createHash("sha256").update(text, "utf8").digest("hex");
const escapeToken = (name) => name.replaceAll("~", "~0").replaceAll("/", "~1");
const has = (object, name) => Object.prototype.hasOwnProperty.call(object, name);

// --- declarations --------------------------------------------------------------------------

function termsEntries(card) {
  const out = [];
  for (const ext of card?.capabilities?.extensions ?? []) {
    if (ext?.uri !== TERMS_URI) continue;
    for (const entry of ext?.params?.proposals ?? []) out.push(entry);
  }
  return out;
}

function committed(card, texts) {
  // PROFILE §2.3: a proposal projects only when its bytes hash to the entry's digest.
  const out = [];
  for (const entry of termsEntries(card)) {
    const text = texts[entry.url];
    if (text === undefined) throw new Error(`terms entry ${entry.url}: fetch_failed`);
    const document = JSON.parse(text);
    if (sha256(jcs(document)) !== entry.digest) {
      throw new Error(`terms entry ${entry.url}: digest_mismatch`);
    }
    out.push({ entry, document });
  }
  return out;
}

function interfacesOf(card) {
  // [binding, url, version] for the 1.0 shape and the 0.3 shape.
  const out = [];
  for (const item of card.supportedInterfaces ?? []) {
    out.push([item.protocolBinding, item.url, item.protocolVersion ?? "1.0"]);
  }
  if (typeof card.url === "string") {
    const version = card.protocolVersion ?? "0.3";
    out.push([card.preferredTransport ?? "JSONRPC", card.url, version]);
    for (const item of card.additionalInterfaces ?? []) out.push([item.transport, item.url, version]);
  }
  return out;
}

const majorMinor = (text) => {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.\d+)*$/.exec(String(text).trim());
  return m ? `${Number(m[1])}.${Number(m[2] ?? 0)}` : null;
};

// --- answers (PROFILE §4) --------------------------------------------------------------------

const cardProjection = (member, value) => ({ source: { document: "card", member }, value });

function present(doc, names, base = "") {
  return names.filter((n) => has(doc, n)).map((n) => cardProjection(`${base}/${n}`, doc[n]));
}

const SECURITY = ["securitySchemes", "securityRequirements", "security"];

function answers(card, proposals) {
  const skills = card.skills ?? [];
  const ids = skills.map((s) => s.id);
  const refusal = jcs({
    refused: true, reason: "out_of_scope", detail: "no declared skill matches", declared_skills: ids,
  });
  const answer = (question, projections, declared = true) =>
    jcs({ question, declared, projections });

  const identity = [
    ...present(card, ["name", "provider", "url"]),
    ...(card.supportedInterfaces ?? []).flatMap((item, i) =>
      has(item, "url") ? [cardProjection(`/supportedInterfaces/${i}/url`, item.url)] : []),
    ...present(card, ["version", "signatures"]),
  ];
  const capabilities = skills.flatMap((s, i) => [
    cardProjection(`/skills/${i}/id`, s.id),
    ...(has(s, "description") ? [cardProjection(`/skills/${i}/description`, s.description)] : []),
  ]);
  const head = present(card, ["supportedInterfaces", "url", "preferredTransport",
    "additionalInterfaces", "defaultInputModes", "defaultOutputModes"]);
  const perSkill = (i) => present(skills[i], ["inputModes", "outputModes", "securityRequirements"], `/skills/${i}`);
  const security = present(card, SECURITY);
  const usage = (skill) => [...head,
    ...skills.flatMap((s, i) => (skill === undefined || s.id === skill ? perSkill(i) : [])), ...security];

  const termsOf = ({ entry, document }) =>
    Object.keys(document).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((name) => ({
      source: { document: "proposal", url: entry.url, digest: entry.digest, member: "/" + escapeToken(name) },
      value: document[name],
    }));
  const termsAnswer = (selected) =>
    selected.length ? answer("terms", selected.flatMap(termsOf)) : answer("terms", [], false);
  const select = (skill) => {
    const direct = proposals.filter((p) => p.entry.offering === skill);
    if (direct.length) return direct;
    return proposals.filter((p) => p.entry.offering === undefined &&
      (p.document?.scope?.offerings ?? []).includes(skill));
  };

  return {
    refusal,
    ask(question, skill) {
      if (skill !== undefined && !ids.includes(skill)) return refusal; // PROFILE §4.4
      switch (question) {
        case "identity": return answer("identity", identity);
        case "capabilities": return answer("capabilities", capabilities);
        case "usage": return answer("usage", usage(skill));
        case "terms": return termsAnswer(skill === undefined ? proposals : select(skill));
        case "refusals": return answer("refusals", [...ids.map((id, i) => cardProjection(`/skills/${i}/id`, id)), ...security]);
        default: return refusal;
      }
    },
  };
}

// --- the bindings (PROFILE §3, §3b) ---------------------------------------------------------

function activation(headers) {
  const listed = (value) => String(value ?? "").split(",").some((item) => item.replace(/^[ \t]+|[ \t]+$/g, "") === URI);
  return { current: listed(headers["a2a-extensions"]), legacy: listed(headers["x-a2a-extensions"]) };
}

function echo(act) {
  if (!act.current && !act.legacy) return {};
  return act.legacy ? { "A2A-Extensions": URI, "X-A2A-Extensions": URI } : { "A2A-Extensions": URI };
}

const rpcError = (id, code, message) => jcs({ error: { code, message }, id, jsonrpc: "2.0" });
const REST_INVALID = jcs({ error: { code: 400, message: "Invalid params", status: "INVALID_ARGUMENT" } });
const REST_VERSION = jcs({ error: { code: 400, message: "Version not supported", status: "FAILED_PRECONDITION" } });

function main() {
  const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, word, i, all) =>
    (word.startsWith("--") ? [...pairs, [word.slice(2), all[i + 1]]] : pairs), []));
  const card = JSON.parse(readFileSync(args.card, "utf8"));
  const cardBytes = readFileSync(args.card);
  const texts = args.proposals ? JSON.parse(readFileSync(args.proposals, "utf8")) : {};
  const served = answers(card, committed(card, texts));
  const interfaces = interfacesOf(card);
  const pathOf = (url) => new URL(url).pathname.replace(/\/+$/, "") || "/";
  const rpcPaths = new Set(interfaces.filter((i) => i[0] === "JSONRPC").map((i) => pathOf(i[1])));
  const restPaths = interfaces.filter((i) => i[0] === "HTTP+JSON").map((i) => pathOf(i[1]));
  // PROFILE §3.10: a host negotiates only when its card declares a 1.0 interface.
  const negotiates = interfaces.some((i) => Number((majorMinor(i[2]) ?? "0.0").split(".")[0]) >= 1);
  const versions = (binding) => new Set(interfaces.filter((i) => i[0] === binding).map((i) => majorMinor(i[2])));
  const refusesVersion = (headers, binding) => {
    if (!negotiates) return false;
    const raw = String(headers["a2a-version"] ?? "").trim() || "0.3";
    return !/^\d+\.\d+$/.test(raw) || !versions(binding).has(majorMinor(raw));
  };

  const send = (res, status, body, headers = {}) => {
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(body);
  };

  function jsonrpc(req, res, body) {
    const act = activation(req.headers);
    let request;
    try { request = JSON.parse(body); } catch { return send(res, 200, rpcError(null, -32700, "Parse error")); }
    const isOurs = (item) => item && typeof item.method === "string" && item.method.startsWith("interview/");
    if (Array.isArray(request)) {
      if (act.current || act.legacy) {
        if (request.some(isOurs)) return send(res, 200, rpcError(null, -32600, "Invalid Request"), echo(act));
      }
      return send(res, 200, rpcError(null, -32600, "Invalid Request")); // no batches here either
    }
    const id = request?.id ?? null;
    if (!isOurs(request) || !(act.current || act.legacy)) {
      return send(res, 200, rpcError(id, -32601, "Method not found")); // the host's own
    }
    const envelope = new Set(["jsonrpc", "id", "method", "params"]);
    const idOk = request.id === undefined || request.id === null || typeof request.id === "string" ||
      Number.isInteger(request.id);
    if (request.jsonrpc !== "2.0" || !idOk || Object.keys(request).some((k) => !envelope.has(k))) {
      return send(res, 200, rpcError(null, -32600, "Invalid Request"), echo(act));
    }
    if (refusesVersion(req.headers, "JSONRPC")) {
      return send(res, 200, rpcError(id, -32009, "Version not supported"), echo(act));
    }
    const question = request.method.slice("interview/".length);
    const result = (bytes) => send(res, 200, `{"id":${jcs(id)},"jsonrpc":"2.0","result":${bytes}}`, echo(act));
    if (!QUESTIONS.includes(question)) return result(served.refusal); // the closure
    const params = has(request, "params") ? request.params : {};
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      return send(res, 200, rpcError(id, -32602, "Invalid params"), echo(act));
    }
    const names = Object.keys(params);
    if (names.length === 0) return result(served.ask(question));
    if (SELECTING.has(question) && names.length === 1 && names[0] === "skill" && typeof params.skill === "string") {
      return result(served.ask(question, params.skill));
    }
    return send(res, 200, rpcError(id, -32602, "Invalid params"), echo(act));
  }

  function rest(req, res, question, query) {
    const act = activation(req.headers);
    if (req.method !== "GET" || !(act.current || act.legacy)) return send(res, 404, '{"error":"not found"}');
    if (refusesVersion(req.headers, "HTTP+JSON")) return send(res, 400, REST_VERSION, echo(act));
    if (!QUESTIONS.includes(question)) return send(res, 200, served.refusal, echo(act));
    const params = {};
    for (const pair of query ? query.split("&") : []) {
      const [rawName, rawValue = ""] = pair.split(/=(.*)/s);
      let name, value;
      try {
        name = decodeURIComponent(rawName.replaceAll("+", " "));
        value = decodeURIComponent(rawValue.replaceAll("+", " "));
      } catch { return send(res, 400, REST_INVALID, echo(act)); }
      if (has(params, name)) return send(res, 400, REST_INVALID, echo(act)); // repeated
      params[name] = value;
    }
    const names = Object.keys(params);
    if (names.length === 0) return send(res, 200, served.ask(question), echo(act));
    if (SELECTING.has(question) && names.length === 1 && names[0] === "skill") {
      return send(res, 200, served.ask(question, params.skill), echo(act));
    }
    return send(res, 400, REST_INVALID, echo(act));
  }

  const server = createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > 65536) { req.destroy(); return; }
      chunks.push(chunk);
    });
    req.on("end", () => {
      const [rawPath, query = ""] = req.url.split(/\?(.*)/s);
      const path = rawPath.replace(/\/+$/, "") || "/";
      if (req.method === "GET" && path === "/.well-known/agent-card.json") {
        return send(res, 200, cardBytes);
      }
      if (req.method === "POST" && rpcPaths.has(path)) {
        return jsonrpc(req, res, Buffer.concat(chunks).toString("utf8"));
      }
      for (const base of restPaths) {
        const prefix = (base === "/" ? "" : base) + "/interview/";
        if (path.startsWith(prefix)) {
          let question;
          try { question = decodeURIComponent(path.slice(prefix.length)); } catch { question = "\u0000"; }
          return rest(req, res, question, query);
        }
      }
      return send(res, 404, '{"error":"not found"}');
    });
  });
  server.listen(Number(args.port), "127.0.0.1");
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main();
