// One origin for the page and the API: /api/* is proxied to the streamkit server.
const streamkit = process.env.STREAMKIT_URL ?? "http://127.0.0.1:8000";

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Next's gzip holds a proxied event stream back until it ends: the answer would arrive all at once.
  // STREAMKIT_COMPRESS=1 turns it back on, to see that for yourself.
  compress: process.env.STREAMKIT_COMPRESS === "1",
  async rewrites() {
    return [{ source: "/api/:path*", destination: `${streamkit}/api/:path*` }];
  },
};

export default nextConfig;
