import GrowCore
