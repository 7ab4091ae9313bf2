// Feature files (paths as arguments) -> the official Gherkin parser's gherkinDocument and pickle
// envelopes as NDJSON on stdout: what a Cucumber implementation would derive from those files.
import { readFileSync } from 'node:fs'
import { generateMessages } from '@cucumber/gherkin'
import { IdGenerator, SourceMediaType } from '@cucumber/messages'

const newId = IdGenerator.incrementing()
for (const uri of process.argv.slice(2)) {
  const data = readFileSync(uri, 'utf8')
  const options = { includeGherkinDocument: true, includePickles: true, newId }
  for (const envelope of generateMessages(data, uri, SourceMediaType.TEXT_X_CUCUMBER_GHERKIN_PLAIN, options)) {
    process.stdout.write(JSON.stringify(envelope) + '\n')
  }
}
