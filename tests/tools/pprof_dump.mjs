// Decode a gzipped pprof profile with npm's pprof-format package and print what it holds
// as JSON, so the Python tests can compare it with the profile it was made from.
//
//   node pprof_dump.mjs NODE_PREFIX PROFILE.pb.gz
//
// NODE_PREFIX is the folder where `npm install pprof-format` was run. The package is an
// independent reader: if profconv's hand-written encoder breaks the wire format, the
// package fails to decode it or decodes something else, and the test notices.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import path from "node:path";

const [prefix, file] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(prefix), "package.json"));
const { Profile } = require("pprof-format");

const profile = Profile.decode(gunzipSync(readFileSync(file)));
const strings = profile.stringTable.strings;
const num = (v) => Number(v); // the package gives bigints for large values

const functions = new Map(profile.function.map((f) => [num(f.id), f]));
const locations = new Map(profile.location.map((l) => [num(l.id), l]));

function frame(id) {
  const loc = locations.get(num(id));
  if (loc === undefined) throw new Error(`sample names location ${id}, which does not exist`);
  const fn = functions.get(num(loc.line[0].functionId));
  if (fn === undefined) throw new Error(`location ${id} names a function that does not exist`);
  return {
    name: strings[num(fn.name)],
    file: strings[num(fn.filename)],
    address: num(loc.address),
    mapping: num(loc.mappingId),
  };
}

const out = {
  stringZero: strings[0],
  sampleTypes: profile.sampleType.map((t) => [strings[num(t.type)], strings[num(t.unit)]]),
  periodType: profile.periodType
    ? [strings[num(profile.periodType.type)], strings[num(profile.periodType.unit)]]
    : null,
  period: num(profile.period),
  timeNanos: num(profile.timeNanos),
  durationNanos: num(profile.durationNanos),
  comments: profile.comment.map((c) => strings[num(c)]),
  mappings: profile.mapping.map((m) => ({
    id: num(m.id),
    start: num(m.memoryStart),
    limit: num(m.memoryLimit),
    file: strings[num(m.filename)],
    hasFunctions: Boolean(m.hasFunctions),
  })),
  samples: profile.sample.map((s) => ({
    frames: s.locationId.map(frame),
    values: s.value.map(num),
    labels: Object.fromEntries(
      s.label.map((l) => [strings[num(l.key)], l.str ? strings[num(l.str)] : num(l.num)])),
  })),
};
process.stdout.write(JSON.stringify(out));
