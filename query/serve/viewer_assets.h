// The viewer's static files (query/viewer/), embedded into the binary at build
// time by query/serve/embed_assets.cmake.
#ifndef TRACETABLE_QUERY_SERVE_VIEWER_ASSETS_H_
#define TRACETABLE_QUERY_SERVE_VIEWER_ASSETS_H_

#include <cstddef>

namespace tracetable::serve {

struct ViewerAsset {
  const char* path;          // "index.html", "viewer.js", ...
  const char* content_type;
  const unsigned char* data;
  size_t size;
};

extern const ViewerAsset kViewerAssets[];
extern const size_t kNumViewerAssets;

}  // namespace tracetable::serve

#endif  // TRACETABLE_QUERY_SERVE_VIEWER_ASSETS_H_
