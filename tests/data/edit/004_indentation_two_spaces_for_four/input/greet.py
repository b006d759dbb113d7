def greet(name):
    message = "Hello, " + name
    print(message)
    return message


def main():
    greet("world")
