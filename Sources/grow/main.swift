import GrowCLI
import Foundation
exit(MainActor.assumeIsolated { runGrow(Array(CommandLine.arguments.dropFirst())) })
