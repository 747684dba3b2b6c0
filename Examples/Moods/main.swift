import OpenCoreData
print("OpenCoreData moods example")
