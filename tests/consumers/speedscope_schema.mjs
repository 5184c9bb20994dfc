// Validates files against speedscope's own published file-format schema (shipped in
// the speedscope npm package as dist/release/file-format-schema.json) with ajv.
//
//   node speedscope_schema.mjs FILE...
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import Ajv from 'ajv'

const here = path.dirname(fileURLToPath(import.meta.url))
const schemaPath = path.join(here, 'node_modules/speedscope/dist/release/file-format-schema.json')
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'))
const validate = new Ajv({allErrors: true, strict: false}).compile(schema)

let failures = 0
for (const file of process.argv.slice(2)) {
  let doc
  try {
    doc = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (e) {
    console.error(`${file}: not JSON: ${e.message}`)
    failures++
    continue
  }
  if (validate(doc)) {
    console.log(`${file}: valid against speedscope's file-format schema`)
  } else {
    failures++
    for (const e of validate.errors.slice(0, 20))
      console.error(`${file}: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
  }
}
if (process.argv.length < 3) {
  console.error('usage: speedscope_schema.mjs FILE...')
  failures++
}
process.exit(failures ? 1 : 0)
