import GrowCLI
