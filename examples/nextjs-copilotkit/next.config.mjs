/** @type {import('next').NextConfig} */
const nextConfig = {
  // The runtime route streams the agent's events to the page; Next's gzip would hold them back until the end.
  compress: false,
};

export default nextConfig;
