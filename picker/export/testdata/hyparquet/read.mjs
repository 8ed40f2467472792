// Reads a parquet file with hyparquet (not ctxsel's writer) and prints its
// rows as JSON, for picker/export's Go test.
import { asyncBufferFromFile, parquetReadObjects, parquetMetadataAsync } from 'hyparquet'

const file = await asyncBufferFromFile(process.argv[2])
const metadata = await parquetMetadataAsync(file)
const rows = await parquetReadObjects({ file, metadata })
process.stdout.write(JSON.stringify({ num_rows: Number(metadata.num_rows), rows }, (_, v) => typeof v === 'bigint' ? Number(v) : v))
