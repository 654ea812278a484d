// Tilescope's service worker: after one visit the site works with the network off.
// `cargo xtask post-build` writes it as sw.js beside index.html, with BUILD (a hash of
// every file of this build) and FILES (every file of this build, relative to this
// script) filled in. docs/publishing.md says how it behaves.
//
// - install: caches every file of this build. A file whose name carries a content hash
//   may come from the browser's HTTP cache (the page has usually just fetched it); any
//   other is revalidated with the host ("no-cache"), so the cache holds this deploy's
//   bytes, never an older deploy's;
// - fetch: answers every request for one of those files from that cache, the page
//   itself (any query, such as an embed's) included; anything else goes to the network;
// - a new build's worker installs beside the running one and waits: the page offers
//   "Reload", which activates it, and the old build's cache is deleted. So a page is
//   only ever served whole from one build, and never talks to another build's compile
//   worker.
"use strict";

const BUILD = "__BUILD__";
const FILES = __FILES__;
// The cache names carry the scope, so two copies of the site on one host (two
// courses, two paths) never delete each other's caches.
const PREFIX = "tilescope " + self.registration.scope + " ";
const CACHE = PREFIX + BUILD;
const PAGE = new URL("index.html", self.registration.scope).href;

// Trunk's and the post-build hook's hashed names: `name-0123456789abcdef.js`,
// `name-0123456789abcdef_bg.wasm` (Trunk drops a 64-bit hash's leading zeros).
const HASHED = /-[0-9a-f]{8,16}(_bg)?\.[a-z]+$/;

self.addEventListener("install", (event) => {
  const request = (file) =>
    new Request(new URL(file, self.location).href, { cache: HASHED.test(file) ? "default" : "no-cache" });
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES.map(request))));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key.startsWith(PREFIX) && key !== CACHE).map((key) => caches.delete(key))))
      .then(() => self.clients.claim())
  );
});

// The page's "Reload" (index.html) asks the waiting worker to take over.
self.addEventListener("message", (event) => {
  if (event.data === "tilescope:activate") self.skipWaiting();
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || !request.url.startsWith(self.registration.scope)) return;
  const url = new URL(request.url);
  url.hash = "";
  let key = url.href;
  if (request.mode === "navigate") {
    // The page under any query (`?embed=...`) and at its folder's URL.
    url.search = "";
    key = url.href === self.registration.scope ? PAGE : url.href;
  }
  event.respondWith(
    caches
      .open(CACHE)
      .then((cache) => cache.match(key))
      .then((hit) => hit || fetch(request))
  );
});
