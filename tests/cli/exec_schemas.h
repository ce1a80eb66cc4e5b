#pragma once
// JSON Schemas of trtexec's export files (samples/common/sampleReporting.cpp, IEngineInspector) as
// kiln exec writes them; the --exportSummary schema is docs/exec_summary.schema.json.

namespace kiln::testing {

// --exportTimes: one object per timed query, trtexec's 12 keys (TensorRT >= 8.6), nothing else.
inline constexpr const char* kExportTimesSchema = R"({
  "type": "array",
  "items": {
    "type": "object",
    "additionalProperties": false,
    "required": ["startEnqMs", "endEnqMs", "startH2dMs", "endH2dMs", "startComputeMs",
                 "endComputeMs", "startD2hMs", "endD2hMs", "h2dMs", "computeMs", "d2hMs",
                 "latencyMs"],
    "properties": {
      "startEnqMs": {"type": "number", "minimum": 0}, "endEnqMs": {"type": "number", "minimum": 0},
      "startH2dMs": {"type": "number", "minimum": 0}, "endH2dMs": {"type": "number", "minimum": 0},
      "startComputeMs": {"type": "number", "minimum": 0},
      "endComputeMs": {"type": "number", "minimum": 0},
      "startD2hMs": {"type": "number", "minimum": 0}, "endD2hMs": {"type": "number", "minimum": 0},
      "h2dMs": {"type": "number", "minimum": 0}, "computeMs": {"type": "number", "minimum": 0},
      "d2hMs": {"type": "number", "minimum": 0}, "latencyMs": {"type": "number", "minimum": 0}
    }
  }
})";

// --exportProfile: [{"count": N}, {"name", "timeMs", "averageMs", "medianMs", "percentage"}, ...]
inline constexpr const char* kExportProfileSchema = R"({
  "type": "array",
  "minItems": 1,
  "prefixItems": [{
    "type": "object", "additionalProperties": false, "required": ["count"],
    "properties": {"count": {"type": "integer", "minimum": 0}}
  }],
  "items": {
    "type": "object",
    "additionalProperties": false,
    "required": ["name", "timeMs", "averageMs", "medianMs", "percentage"],
    "properties": {
      "name": {"type": "string"}, "timeMs": {"type": "number", "minimum": 0},
      "averageMs": {"type": "number", "minimum": 0}, "medianMs": {"type": "number", "minimum": 0},
      "percentage": {"type": "number", "minimum": 0}
    }
  }
})";

// --exportLayerInfo with --profilingVerbosity=detailed: TensorRT's inspector keys (Name,
// LayerType, Inputs/Outputs with Name, Location, Dimensions, Format/Datatype; TacticName) plus
// kiln's (Precision, Kind, OnnxNodes, Attributes, WeightBytes).
inline constexpr const char* kExportLayerInfoSchema = R"({
  "type": "object",
  "additionalProperties": false,
  "required": ["Layers", "Bindings"],
  "properties": {
    "Bindings": {"type": "array", "items": {"type": "string"}},
    "Layers": {
      "type": "array",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["Name", "LayerType", "Inputs", "Outputs", "TacticName", "Precision", "Kind",
                     "OnnxNodes", "Attributes", "WeightBytes"],
        "properties": {
          "Name": {"type": "string"}, "LayerType": {"type": "string"},
          "Inputs": {"type": "array", "items": {"$ref": "#/definitions/tensor"}},
          "Outputs": {"type": "array", "items": {"$ref": "#/definitions/tensor"}},
          "TacticName": {"type": "string"}, "Precision": {"type": "string"},
          "Kind": {"enum": ["run", "shape"]},
          "OnnxNodes": {"type": "array", "minItems": 1, "items": {"type": "string"}},
          "Attributes": {"type": "object"},
          "WeightBytes": {"type": "integer", "minimum": 0}
        }
      }
    }
  },
  "definitions": {
    "tensor": {
      "type": "object",
      "additionalProperties": false,
      "required": ["Name", "Location", "Dimensions", "Format/Datatype"],
      "properties": {
        "Name": {"type": "string"}, "Location": {"const": "Host"},
        "Dimensions": {"type": "array", "items": {"type": "integer", "minimum": -1}},
        "Format/Datatype": {"type": "string"}
      }
    }
  }
})";

// --exportLayerInfo with --profilingVerbosity=layer_names_only.
inline constexpr const char* kExportLayerNamesSchema = R"({
  "type": "object",
  "additionalProperties": false,
  "required": ["Layers", "Bindings"],
  "properties": {
    "Layers": {"type": "array", "items": {"type": "string"}},
    "Bindings": {"type": "array", "items": {"type": "string"}}
  }
})";

// --exportOutput: [{"name", "dimensions": "1x1000", "values": [...]}]
inline constexpr const char* kExportOutputSchema = R"({
  "type": "array",
  "items": {
    "type": "object",
    "additionalProperties": false,
    "required": ["name", "dimensions", "values"],
    "properties": {
      "name": {"type": "string"}, "dimensions": {"type": "string"},
      "values": {"type": "array", "items": {"type": ["number", "string", "boolean"]}}
    }
  }
})";

}  // namespace kiln::testing
