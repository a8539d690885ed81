// JSON byte compatibility: for each text Python wrote, what JSON.stringify writes for the same value.
export async function handle(req) {
  return req.texts.map((t) => JSON.stringify(JSON.parse(t)));
}
