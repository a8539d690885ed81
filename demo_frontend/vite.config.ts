import { defineConfig } from "vite";

// The production build goes into the Python package, so the demo app serves it without node.
// `base: "./"` keeps every asset URL relative: the page works wherever the app mounts it.
// `npm run dev` proxies the API to a running `streamkit demo` on port 8000.
export default defineConfig({
  base: "./",
  build: {
    outDir: "../streamkit/demo/static",
    emptyOutDir: true,
    assetsDir: "assets",
    chunkSizeWarningLimit: 1200,
    rollupOptions: {
      onwarn(warning, warn) {
        // "use client" directives of React libraries mean nothing in a client-only bundle
        if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
        warn(warning);
      },
    },
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:8000" },
  },
});
