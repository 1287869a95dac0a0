#include "formats/parquet/schema.h"

#include <utility>

namespace sluice::parquet {
namespace {

struct Node {
  size_t element = 0;  // index into FileMetaData::schema
  size_t parent = 0;   // node index (the root is its own)
  bool group = false;
  std::vector<size_t> children;  // node indices
  int16_t def = 0;
  int16_t rep = 0;
  size_t first_leaf = 0;
  size_t leaf_count = 0;
};

class Builder {
 public:
  Builder(const FileMetaData& meta, std::string_view file) : schema_(meta.schema), file_(file) {}

  Result<Schema> Build() {
    SLUICE_RETURN_IF_ERROR(BuildTree());
    Schema out;
    out.leaves.reserve(leaves_.size());
    for (size_t child : nodes_[0].children) {
      out.fields.push_back(DescribeField(child));
      const size_t field = out.fields.size() - 1;
      for (size_t l = nodes_[child].first_leaf; l < nodes_[child].first_leaf + nodes_[child].leaf_count; ++l) {
        out.leaves.push_back(MakeLeaf(leaves_[l], field));
      }
    }
    return out;
  }

 private:
  const SchemaElement& El(size_t node) const { return schema_[nodes_[node].element]; }

  Status ElementError(size_t element, std::string_view what) const {
    std::string name = element < schema_.size() ? schema_[element].name : "";
    return CorruptError(std::string(file_) + ": schema: element " + std::to_string(element) +
                        " (\"" + name + "\"): " + std::string(what));
  }

  // The flattened list back into a tree, without recursion.
  Status BuildTree() {
    if (schema_.empty()) return CorruptError(std::string(file_) + ": schema: no elements");
    const SchemaElement& root = schema_[0];
    if (!root.num_children) return ElementError(0, "the root has no children count");
    nodes_.reserve(schema_.size());
    nodes_.push_back(Node{});
    nodes_[0].group = true;
    struct Open {
      size_t node;
      int32_t left;
    };
    std::vector<Open> stack{{0, *root.num_children}};
    size_t next = 1;
    while (!stack.empty()) {
      if (stack.back().left == 0) {
        Node& done = nodes_[stack.back().node];
        done.leaf_count = leaves_.size() - done.first_leaf;
        stack.pop_back();
        continue;
      }
      --stack.back().left;
      if (next >= schema_.size()) {
        return ElementError(nodes_[stack.back().node].element,
                            "children counts run past the " + std::to_string(schema_.size()) +
                                " elements");
      }
      const size_t element = next++;
      const SchemaElement& e = schema_[element];
      if (!e.repetition) return ElementError(element, "no repetition type");
      const int r = static_cast<int>(*e.repetition);
      if (r < 0 || r > 2) {
        return ElementError(element, "unknown repetition type " + RepetitionName(*e.repetition));
      }
      const Node& parent = nodes_[stack.back().node];
      Node n;
      n.element = element;
      n.parent = stack.back().node;
      n.def = static_cast<int16_t>(parent.def + (r != 0 ? 1 : 0));
      n.rep = static_cast<int16_t>(parent.rep + (r == 2 ? 1 : 0));
      n.first_leaf = leaves_.size();
      const bool leaf = e.type.has_value() && e.num_children.value_or(0) == 0;
      n.group = !leaf;
      if (leaf) {
        SLUICE_RETURN_IF_ERROR(CheckLeaf(element));
        n.leaf_count = 1;
        leaves_.push_back(nodes_.size());
      } else if (!e.num_children) {
        return ElementError(element, "neither a type nor a children count");
      }
      const size_t index = nodes_.size();
      nodes_[stack.back().node].children.push_back(index);
      nodes_.push_back(std::move(n));
      if (!leaf) {
        if (stack.size() >= kMaxSchemaDepth) {
          return ElementError(element, "nested deeper than " + std::to_string(kMaxSchemaDepth));
        }
        stack.push_back({index, *e.num_children});
      }
    }
    if (next != schema_.size()) {
      return ElementError(next, std::to_string(schema_.size() - next) +
                                    " elements after the root's children");
    }
    return Status::Ok();
  }

  Status CheckLeaf(size_t element) const {
    const SchemaElement& e = schema_[element];
    const int t = static_cast<int>(*e.type);
    if (t < 0 || t > 7) return ElementError(element, "unknown physical type " + PhysicalTypeName(*e.type));
    if (*e.type == PhysicalType::kFixedLenByteArray && e.type_length.value_or(0) <= 0) {
      return ElementError(element, "FIXED_LEN_BYTE_ARRAY without a positive type_length");
    }
    return Status::Ok();
  }

  bool Annotated(size_t node, LogicalType::Kind kind, ConvertedType converted) const {
    const SchemaElement& e = El(node);
    return e.logical_type.kind == kind || e.converted_type == converted;
  }

  bool IsMap(size_t node) const {
    return Annotated(node, LogicalType::Kind::kMap, ConvertedType::kMap) ||
           El(node).converted_type == ConvertedType::kMapKeyValue;
  }

  Repetition Rep(size_t node) const { return *El(node).repetition; }

  Field DescribeField(size_t top) {
    Field f;
    f.name = El(top).name;
    f.first_leaf = nodes_[top].first_leaf;
    f.leaf_count = nodes_[top].leaf_count;
    const auto refuse = [&](std::string what) {
      f.unsupported = std::move(what);
      f.slots.clear();
      f.list_depth = 0;
      return f;
    };
    if (!nodes_[top].group && Rep(top) == Repetition::kRepeated) {
      // A bare repeated primitive: a list (never null) of required values.
      f.slots.push_back(FieldSlot{0, nodes_[top].def, false});
      f.slots.push_back(FieldSlot{nodes_[top].def, 0, false});
      f.list_depth = 1;
      return f;
    }
    size_t cur = top;
    while (true) {
      const Node& n = nodes_[cur];
      const bool optional = Rep(cur) == Repetition::kOptional;
      if (!n.group) {
        if (Rep(cur) == Repetition::kRepeated && f.slots.size() > 0 &&
            nodes_[cur].def != f.slots.back().entries_from) {
          return refuse("a list of repeated values in a form not recognised");
        }
        f.slots.push_back(FieldSlot{n.def, 0, optional});
        f.list_depth = f.slots.size() - 1;
        return f;
      }
      if (IsMap(cur)) return refuse("a map (MAP)");
      if (!Annotated(cur, LogicalType::Kind::kList, ConvertedType::kList)) {
        if (Rep(cur) == Repetition::kRepeated) return refuse("a list of structs");
        return refuse(cur == top ? "a struct" : "a list of structs");
      }
      if (Rep(cur) == Repetition::kRepeated) return refuse("a repeated LIST group");
      if (n.children.size() != 1 || Rep(n.children[0]) != Repetition::kRepeated) {
        return refuse("a LIST group whose child is not one repeated field");
      }
      const size_t r = n.children[0];
      const Node& rn = nodes_[r];
      size_t element = r;
      if (rn.group && rn.children.size() == 1 && El(r).name != "array" &&
          El(r).name != El(cur).name + "_tuple") {
        element = rn.children[0];
      }
      if (element == r && rn.group) return refuse("a list of structs");
      if (f.slots.size() >= kMaxSchemaDepth) return refuse("lists nested too deep");
      f.slots.push_back(FieldSlot{n.def, rn.def, optional});
      cur = element;
    }
  }

  LeafColumn MakeLeaf(size_t node, size_t field) const {
    const SchemaElement& e = El(node);
    LeafColumn c;
    std::vector<size_t> chain;  // the leaf up to the root's child
    for (size_t p = node; p != 0; p = nodes_[p].parent) chain.push_back(p);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      c.path_parts.push_back(El(*it).name);
      if (!c.path.empty()) c.path += '.';
      c.path += El(*it).name;
    }
    c.physical_type = *e.type;
    c.type_length = e.type_length.value_or(0);
    c.logical_type = e.logical_type;
    c.converted_type = e.converted_type;
    if (e.logical_type.kind == LogicalType::Kind::kDecimal) {
      c.scale = e.logical_type.scale;
      c.precision = e.logical_type.precision;
    } else {
      c.scale = e.scale.value_or(0);
      c.precision = e.precision.value_or(0);
    }
    c.max_definition_level = nodes_[node].def;
    c.max_repetition_level = nodes_[node].rep;
    c.field = field;
    return c;
  }

  const std::vector<SchemaElement>& schema_;
  std::string_view file_;
  std::vector<Node> nodes_;
  std::vector<size_t> leaves_;  // node index of each leaf, in order
};

}  // namespace

Result<Schema> BuildSchema(const FileMetaData& meta, std::string_view file) {
  return Builder(meta, file).Build();
}

Status ReadableField(const Schema& schema, size_t field, std::string_view file) {
  if (field >= schema.fields.size()) {
    return NotFoundError(std::string(file) + ": no column " + std::to_string(field) + " (" +
                         std::to_string(schema.fields.size()) + " columns)");
  }
  const Field& f = schema.fields[field];
  if (!f.unsupported) return Status::Ok();
  return UnimplementedError(std::string(file) + ": column \"" + f.name + "\": " + *f.unsupported +
                            " is not supported (primitives and lists of primitives are)");
}

}  // namespace sluice::parquet
