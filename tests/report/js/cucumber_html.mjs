// NDJSON Cucumber Messages on stdin -> the official Cucumber HTML report on stdout.
// @cucumber/html-formatter ships no CLI since v21 (only the CucumberHtmlStream transform),
// so this is the few lines of glue its README shows, reading one envelope a line.
import { createInterface } from 'node:readline'
import { CucumberHtmlStream } from '@cucumber/html-formatter'

const html = new CucumberHtmlStream()
html.pipe(process.stdout)
html.on('error', (err) => { console.error(err); process.exit(1) })
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
let n = 0
for await (const line of lines) {
  n += 1
  if (!line.trim()) continue
  let envelope
  try {
    envelope = JSON.parse(line)
  } catch (err) {
    console.error(`line ${n}: not JSON: ${err.message}`)
    process.exit(2)
  }
  if (!html.write(envelope)) await new Promise((resolve) => html.once('drain', resolve))
}
html.end()
