def greet(name):
    message = "Hello, " + name
    print(message.upper())
    return message


def main():
    greet("world")
