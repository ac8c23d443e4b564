// The inputs of a table and their top-level fields (a Chrome trace's
// "metadata", "otherData", "systemTraceEvents", ...; an XSpace's
// "hostnames"), as stored at ingest: each value is the field's JSON text,
// validated when read, so it is written back verbatim.
//
//  - AppendInputsJson: a JSON array, one object per input in ingest order:
//    {"path","host","bytes","events","fields":{key: value, ...}}. Used by
//    `info --json` and the HTTP table answer.
//  - AppendTopLevelFields: for `export`, `"key":value,` for each field to
//    write at the top level of the exported trace. A key whose value is the
//    same in every input that has it is written once; when inputs disagree,
//    the key is written with the first input's value and all the values go
//    under "tracetableInputFields": {path: {key: value}}, so nothing is
//    lost. traceEvents and displayTimeUnit (the export writes its own) are
//    left out.
#ifndef TRACETABLE_QUERY_INPUT_FIELDS_H_
#define TRACETABLE_QUERY_INPUT_FIELDS_H_

#include <string>

#include "store/table.h"

namespace tracetable {

void AppendInputsJson(const Table& t, std::string* out);
void AppendTopLevelFields(const Table& t, std::string* out);

}  // namespace tracetable

#endif  // TRACETABLE_QUERY_INPUT_FIELDS_H_
