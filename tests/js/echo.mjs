// Trivial handler used to test the oracle itself.
export async function handle(req) {
  if (req.fail) throw new Error("asked to fail");
  if (req.warn) console.warn("a warning", { n: 1 });
  return { echo: req.value, stringified: req.stringify === undefined ? undefined : JSON.stringify(req.stringify) };
}
