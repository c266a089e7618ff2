import { defineConfig } from "vite";

// The build goes to static/, which the Go package viewer embeds and which is
// committed: file names carry no content hash, so rebuilding from the same
// sources gives the same files (.ci/check-viewer compares them).
export default defineConfig({
  base: "./",
  build: {
    outDir: "static",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: false,
    sourcemap: false,
    reportCompressedSize: false,
    rolldownOptions: {
      output: {
        entryFileNames: "assets/app.js",
        chunkFileNames: "assets/[name].js",
        assetFileNames: "assets/[name][extname]",
      },
    },
  },
});
