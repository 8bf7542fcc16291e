// grow-api MODULES_DIRECTORY: prints the SDK's API listing, made from the module interfaces a
// build left in MODULES_DIRECTORY (`.build/debug/Modules`). `make api` writes it to
// api/GrowKit.api.txt; GrowPluginKitTests' APIListingTests compares the build with that file.
import Foundation
import GrowAPI

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let directory = arguments.first else {
  FileHandle.standardError.write(Data("usage: grow-api MODULES_DIRECTORY\n".utf8))
  exit(2)
}
do {
  let lines = try APIListing.listing(interfacesIn: URL(fileURLWithPath: directory))
  FileHandle.standardOutput.write(Data(lines.map { $0 + "\n" }.joined().utf8))
} catch {
  FileHandle.standardError.write(Data("grow-api: \(error)\n".utf8))
  exit(1)
}
