// The commit–reveal round of client seeds (chieu-fair-v2) on the client side, with no stack: the
// commitment of docs/fairness.md's vector, and what the round asks of a player at a view.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { SeatInfoSchema, TableViewSchema } from "../gen/chieu/table/v1/table_service_pb.js";
import { clientCommitment, keepSeed, keptSeed, roundStep } from "../src/client/index.js";

test("the client commitment of docs/fairness.md's vector", async () => {
  const seed = Uint8Array.from({ length: 32 }, (_, i) => i);
  const got = await clientCommitment("t1", 1n, "alice", seed);
  assert.equal(got, "0322309bcf546ba02f09ac5f333c267718e490283583871d061ec7f28de8e97a");
  const page = readFileSync(new URL("../../../docs/fairness.md", import.meta.url), "utf8");
  assert.ok(page.includes(got), "the vector is on the page");
});

test("commit while no reveal is asked, reveal when the seat is asked, once", () => {
  const seats = ["alice", "bob"].map((playerId, seat) => create(SeatInfoSchema, { playerId, seat: BigInt(seat) }));
  const view = (v: object) => create(TableViewSchema, { tableId: "t1", roundHandNo: 3n, version: 10n, seats, ...v });
  const acked = () => 9n, none = () => undefined;
  assert.equal(roundStep(view({}), "alice", none), "commit");
  assert.equal(roundStep(view({ committed: ["alice"] }), "alice", acked), undefined);
  assert.equal(roundStep(view({ committed: ["alice"] }), "alice", none), "commit"); // a lost seed: again
  assert.equal(roundStep(view({ version: 8n }), "alice", acked), undefined); // a view behind the answer
  assert.equal(roundStep(view({ revealPlayers: ["alice", "bob"] }), "alice", acked), "reveal");
  assert.equal(roundStep(view({ revealPlayers: ["alice", "bob"] }), "alice", none), undefined); // withholds
  assert.equal(roundStep(view({ revealPlayers: ["alice", "bob"], revealed: ["alice"] }), "alice", acked), undefined);
  assert.equal(roundStep(view({ revealPlayers: ["bob"] }), "alice", acked), undefined); // sits this hand out
  assert.equal(roundStep(view({}), "carol", acked), undefined); // not seated
});

test("a committed seed kept for a reload comes back whole, per player and hand", () => {
  const store = new Map<string, string>();
  const keeper = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => { store.set(k, v); } };
  const seed = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
  keepSeed(keeper, "alice", "t1/3", { seed, version: 12n });
  assert.deepEqual(keptSeed(keeper, "alice", "t1/3"), { seed, version: 12n });
  assert.equal(keptSeed(keeper, "bob", "t1/3"), undefined);
  assert.equal(keptSeed(keeper, "alice", "t1/4"), undefined);
  store.set("chieu.seed/alice/t1/3", "{not json");
  assert.equal(keptSeed(keeper, "alice", "t1/3"), undefined);
  assert.equal(keptSeed(undefined, "alice", "t1/3"), undefined);
});
