print("depthpose")
