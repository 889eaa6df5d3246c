// SPDX-License-Identifier: LGPL-2.1-or-later
// CatalogTree: what each folder of a catalog's names holds.
#include <gtest/gtest.h>

#include "vod/client/catalog_tree.hpp"

namespace vod::client {
namespace {

proto::Catalog catalog(std::initializer_list<const char*> names) {
  proto::Catalog c;
  c.generation = 1;
  for (const char* n : names) {
    proto::CatalogEntry e;
    e.name = n;
    c.entries.push_back(e);
  }
  return c;
}

TEST(CatalogTree, EachFolderListsItsFoldersWithCountsAndItsEntriesByName) {
  const auto c = catalog({"top.ts", "Series/Show/Season 01/E02.mkv", "Films/B/B.mp4", "Films/A (2024)/A - 720p.mp4",
                          "Series/Show/Season 01/E01.mkv", "Films/A (2024)/A - 1080p.mp4", "cam"});
  const CatalogTree t(c);
  const auto* top = t.folder("");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->folders, (std::map<std::string, std::size_t>{{"Films", 3}, {"Series", 2}}));
  EXPECT_EQ(top->entries, (std::vector<std::size_t>{6, 0}));  // "cam" < "top.ts"
  const auto* films = t.folder("Films");
  ASSERT_NE(films, nullptr);
  EXPECT_EQ(films->folders, (std::map<std::string, std::size_t>{{"A (2024)", 2}, {"B", 1}}));
  EXPECT_TRUE(films->entries.empty());
  const auto* a = t.folder("Films/A (2024)");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->entries, (std::vector<std::size_t>{5, 3}));  // "A - 1080p" < "A - 720p"
  ASSERT_NE(t.folder("Series/Show"), nullptr);
  EXPECT_EQ(t.folder("Series/Show")->folders, (std::map<std::string, std::size_t>{{"Season 01", 2}}));
  EXPECT_EQ(t.folder("Series/Show/Season 01")->entries, (std::vector<std::size_t>{4, 1}));
  EXPECT_EQ(t.folder("Films/"), nullptr);
  EXPECT_EQ(t.folder("Film"), nullptr);
  EXPECT_EQ(t.folder("top.ts"), nullptr);
  EXPECT_EQ(t.entry("Films/B/B.mp4"), 2u);
  EXPECT_EQ(t.entry("Films/B"), std::nullopt);
  EXPECT_EQ(folder_of("Films/B/B.mp4"), "Films/B");
  EXPECT_EQ(leaf_of("Films/B/B.mp4"), "B.mp4");
  EXPECT_EQ(folder_of("top.ts"), "");
  EXPECT_EQ(leaf_of("top.ts"), "top.ts");
}

TEST(CatalogTree, AnEmptyCatalogHasAnEmptyTop) {
  const CatalogTree t(catalog({}));
  ASSERT_NE(t.folder(""), nullptr);
  EXPECT_TRUE(t.folder("")->folders.empty());
  EXPECT_TRUE(t.folder("")->entries.empty());
}

}  // namespace
}  // namespace vod::client
