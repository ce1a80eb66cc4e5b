#include "ir/graph_edit.h"

#include <gtest/gtest.h>

#include "passes/pass_harness.h"

namespace kiln {
namespace graph_edit_test {

using testing::OnnxBuilder;

OnnxBuilder chain() {
  OnnxBuilder b;
  b.input("x", 1, {2, 3});
  b.node("Relu", {"x"}, {"a"}, "r1");
  b.node("Neg", {"a"}, {"b"}, "n1");
  b.node("Sigmoid", {"a"}, {"unused"}, "s1");
  b.node("Abs", {"b"}, {"y"}, "abs1");
  b.output("y");
  return b;
}

TEST(GraphEdit, IndexCountsReadersAndGraphOutputs) {
  ir::Graph g = testing::import_model(chain());
  ir::GraphIndex index(g);
  EXPECT_EQ(index.num_readers(g.find_value("a")), 2u);
  EXPECT_FALSE(index.has_single_reader(g.find_value("a")));
  EXPECT_TRUE(index.has_single_reader(g.find_value("b")));
  EXPECT_EQ(index.num_readers(g.find_value("y")), 1u);
  EXPECT_FALSE(index.has_single_reader(g.find_value("y")));
  EXPECT_EQ(index.producer(g.find_value("x")), -1);
  EXPECT_EQ(g.nodes[static_cast<size_t>(index.producer(g.find_value("b")))].name, "n1");
}

TEST(GraphEdit, RemoveDeadNodesKeepsOutputProducers) {
  ir::Graph g = testing::import_model(chain());
  EXPECT_EQ(ir::remove_dead_nodes(g), 1);
  EXPECT_EQ(testing::op_types(g), (std::vector<std::string>{"Relu", "Neg", "Abs"}));
  EXPECT_TRUE(g.verify().is_ok());
}

TEST(GraphEdit, ReplaceOutputValueKeepsTheOutputName) {
  ir::Graph g = testing::import_model(chain());
  // Drop abs1: n1 now produces the graph output "y" itself.
  const ir::ValueId y = g.find_value("y");
  ir::replace_output_value(g, y, g.find_value("b"));
  g.nodes.erase(g.nodes.begin() + 3);
  ASSERT_TRUE(g.verify().is_ok()) << g.dump();
  EXPECT_EQ(g.nodes[1].outputs[0], y);
  EXPECT_EQ(g.value(g.outputs[0]).name, "y");
}

TEST(GraphEdit, UniqueNamesAndOrigins) {
  ir::Graph g = testing::import_model(chain());
  EXPECT_EQ(ir::unique_value_name(g, "a"), "a__1");
  EXPECT_EQ(ir::unique_value_name(g, "fresh"), "fresh");
  ir::Node conv = g.nodes[0];
  ir::add_origins(conv, g.nodes[1], /*from_runs_first=*/false);
  ir::add_origins(conv, g.nodes[3], /*from_runs_first=*/false);
  EXPECT_EQ(conv.origins(), (std::vector<std::string>{"r1", "n1", "abs1"}));
}

TEST(GraphEdit, NodeNamesNeverGiveOneNameTwice) {
  ir::Graph g = testing::import_model(chain());
  ir::NodeNames names(g);
  EXPECT_EQ(names.take("n1"), "n1__1");  // the graph's node
  EXPECT_EQ(names.take("n1"), "n1__2");  // and the one just named
  EXPECT_EQ(names.take("fresh"), "fresh");
  EXPECT_EQ(names.take("fresh"), "fresh__1");
  EXPECT_EQ(names.take("r1", "_"), "r1_1");
  EXPECT_EQ(names.take("r1", "_"), "r1_2");
}

}  // namespace graph_edit_test
}  // namespace kiln
