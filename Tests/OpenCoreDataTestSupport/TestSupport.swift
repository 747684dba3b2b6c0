import Foundation
import OpenCoreData
