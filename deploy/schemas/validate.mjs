// Validates custom resources against their CRDs' own schemas (the validators the pinned
// @kubernetes-models packages compile from CloudNativePG's, cert-manager's and prometheus-
// operator's API definitions). Reads a JSON array of objects on stdin, writes one JSON result per
// object: {apiVersion, kind, name, ok, errors}; an object of a kind with no schema here fails.
//   npm ci --prefix deploy/schemas && kubectl kustomize deploy/overlays/prod | ... | node deploy/schemas/validate.mjs
import { readFileSync } from "node:fs";

const PACKAGES = {
  "postgresql.cnpg.io": "@kubernetes-models/cloudnative-pg",
  "cert-manager.io": "@kubernetes-models/cert-manager",
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
};

const objects = JSON.parse(readFileSync(0, "utf8"));
const results = [];
for (const obj of objects) {
  const [group, version] = obj.apiVersion.split("/");
  const result = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata?.name, ok: false, errors: [] };
  const pkg = PACKAGES[group];
  if (!pkg) {
    result.errors.push(`no schema for the group ${group}`);
  } else {
    try {
      const mod = await import(`${pkg}/${group}/${version}/${obj.kind}`);
      new mod[obj.kind](obj).validate();
      result.ok = true;
    } catch (e) {
      result.errors.push(String(e.message ?? e));
    }
  }
  results.push(result);
}
process.stdout.write(JSON.stringify(results) + "\n");
